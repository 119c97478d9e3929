package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A Go program of a user's own, in a directory outside the repository, builds against the
 * client of a checkout by exactly the route clients/go/README.md documents ("Using it from your
 * own program", without a module proxy): the README's shell lines and program, with HOME in this
 * module's target/ and REDLOCKD the repository. The build cache is check.sh's, warm once the Go
 * client was built, so that only the program itself is compiled. And docs/clients.md names every
 * Debian package check.sh needs.
 */
class GoProgramOutsideTheRepoTest {
  private static final Pattern ROUTE = Pattern.compile(
      "## Using it from your own program\\n.*?```sh\\n(.*?)\\n```\\n\\n```go\\n(.*?)\\n```", Pattern.DOTALL);

  /** docs/clients.md lists the Debian packages check.sh asks for when a tool is missing, all of them. */
  @Test
  void theClientsPageNamesEveryPackageCheckShNeeds() throws Exception {
    Path root = Runtimes.repositoryRoot();
    Matcher needed = Pattern.compile("apt-get install ([a-z0-9 -]+)\"")
        .matcher(Files.readString(root.resolve("clients/go/check.sh")));
    assertThat(needed.find()).as("check.sh's apt-get line").isTrue();
    String page = Files.readString(root.resolve("docs/clients.md")).replaceAll("\\s+", " ");
    assertThat(page).as("docs/clients.md's Go packages").contains("(`" + needed.group(1).strip() + "`");
  }

  @Test
  void theDocumentedRouteBuildsAProgramOutsideTheRepository() throws Exception {
    ClientBuilds.assumeBuilt(Language.GO); // skips (or fails under CI) without Go; warms the build cache
    Path root = Runtimes.repositoryRoot();
    Matcher route = ROUTE.matcher(Files.readString(root.resolve("clients/go/README.md")));
    assertThat(route.find()).as("clients/go/README.md's route: a sh block, then the program").isTrue();
    String commands = route.group(1);
    assertThat(commands).as("the line that names the checkout").containsPattern("(?m)^REDLOCKD=");
    commands = commands.replaceFirst("(?m)^REDLOCKD=.*$",
        Matcher.quoteReplacement("REDLOCKD='" + root + "'"));

    Path home = Files.createTempDirectory(root.resolve("integration-tests/target"), "go-user-");
    Path program = Files.createDirectories(home.resolve("myservice"));
    Files.writeString(program.resolve("main.go"), route.group(2) + "\n");
    // The user's Go build cache, as the clients' checks use (HOME moved would give a cold one).
    Runtimes.Result build = Runtimes.run(List.of("env", "HOME=" + home, "GOFLAGS=", "sh", "-e", "-c", commands),
        program, Duration.ofMinutes(5), ClientBuilds.BUILD_CACHES);
    assertThat(build.exitCode()).as(build.output()).isZero();
    assertThat(program.resolve("myservice")).isExecutable();
    assertThat(home.resolve("gopath/src/redlockd.dev/go").toRealPath())
        .isEqualTo(root.resolve("clients/go").toRealPath());
  }
}
