package dev.redlockd.it.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The ShedLock example in docs/clients.md is ReadmeShedLockExample, and it runs. */
class ReadmeShedLockExampleTest {
  private static final Path MODULE = Path.of(System.getProperty("user.dir"));

  @Test
  void theClientsPageShowsTheExampleVerbatim() throws IOException {
    String source = Files.readString(MODULE.resolve("src/test/java/dev/redlockd/it/shedlock/ReadmeShedLockExample.java"));
    Matcher m = Pattern.compile("// README:shedlock-example:begin\\n(.*?)\\n\\s*// README:shedlock-example:end",
        Pattern.DOTALL).matcher(source);
    assertThat(m.find()).isTrue();
    List<String> lines = m.group(1).lines().toList();
    int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
        .min().orElse(0);
    String example = String.join("\n", lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList());
    assertThat(Files.readString(MODULE.resolve("../docs/clients.md"))).as("docs/clients.md's ShedLock example")
        .contains("```java\n" + example + "\n```");
  }

  @Test
  void theExampleRunsAgainstTheRealServer() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      ReadmeShedLockExample.Reports reports = new ReadmeShedLockExample.Reports();

      ReadmeShedLockExample.run("127.0.0.1:" + h.server.port(), reports);

      assertThat(reports.builtWithToken).as("runs, each with its fencing token").hasSize(1);
      DescribeResponse lock = h.blocking.describe(DescribeRequest.newBuilder().setResource("shedlock/nightly-report").build());
      assertThat(lock.getHeld()).as("held on for lockAtLeastFor after the job").isTrue();
      assertThat(lock.getFencingToken()).isEqualTo(reports.builtWithToken.get(0));
      assertThat(LiveServer.fromProto(lock.getRemainingTtl())).as("shortened to what is left of lockAtLeastFor")
          .isLessThanOrEqualTo(Duration.ofSeconds(32));
    }
  }
}
