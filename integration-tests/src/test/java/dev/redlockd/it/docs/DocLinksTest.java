package dev.redlockd.it.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link in README.md, docs/*.md and clients/&#42;/README.md leads somewhere: to a
 * file or directory that exists and, for a {@code #anchor}, to a heading that exists in the
 * target page (or this one), by GitHub's rules for heading anchors. Links with a scheme
 * (https:, mailto:) are not followed.
 */
class DocLinksTest {

  @Test
  void everyRelativeLinkAndAnchorInTheDocsLeadsSomewhere() {
    Markdown docs = Markdown.ofRepository();
    List<Path> pages = docs.pagesAndClientReadmes();
    assertThat(pages).extracting(docs::relative)
        .contains("README.md", "docs/README.md", "docs/api.md", "docs/guarantees.md", "docs/clients.md",
            "docs/operating.md", "docs/engine.md");

    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path page : pages) {
      for (Markdown.Link link : Markdown.links(Markdown.lines(page))) {
        checked++;
        String problem = problem(page, link.target());
        if (problem != null) {
          broken.add(docs.relative(page) + ":" + link.line() + ": (" + link.target() + ") " + problem);
        }
      }
    }
    assertThat(checked).as("links found").isGreaterThan(50);
    assertThat(broken).as("broken links in the docs").isEmpty();
  }

  @Test
  void aBrokenFileOrAnchorIsReported(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("a.md"), String.join("\n",
        "# Page A", "", "## What it guarantees, and under which assumptions", "",
        "[ok](#what-it-guarantees-and-under-which-assumptions) [ok](b.md#keepalive-a-lease-for-v1_2)",
        "[bad](#no-such-heading) [bad](missing.md) [bad](b.md#page-a) `[not a link](x.md)`",
        "```text", "[inside a block](nowhere.md)", "```", "[web](https://example.com/x.md)"));
    Files.writeString(dir.resolve("b.md"), "# Page B\n\n## KeepAlive: a lease, for v1_2!\n");

    List<String> problems = new ArrayList<>();
    for (Markdown.Link link : Markdown.links(Markdown.lines(dir.resolve("a.md")))) {
      String problem = problem(dir.resolve("a.md"), link.target());
      if (problem != null) {
        problems.add(link.target());
      }
    }
    assertThat(problems).containsExactly("#no-such-heading", "missing.md", "b.md#page-a");
  }

  @Test
  void anchorsFollowGitHubsRules() {
    assertThat(Markdown.slug("What it guarantees, and under which assumptions"))
        .isEqualTo("what-it-guarantees-and-under-which-assumptions");
    assertThat(Markdown.slug("KeepAlive: a lease that lives as long as your stream"))
        .isEqualTo("keepalive-a-lease-that-lives-as-long-as-your-stream");
    assertThat(Markdown.slug("TLS, and credentials for the Redis nodes"))
        .isEqualTo("tls-and-credentials-for-the-redis-nodes");
    assertThat(Markdown.slug("`--node-timeout` and fence_max")).isEqualTo("--node-timeout-and-fence_max");
    assertThat(Markdown.slug("See [the API](api.md)")).isEqualTo("see-the-api");
    assertThat(Markdown.anchors(List.of("# Notes", "## Notes", "```", "# Notes", "```")))
        .containsExactly("notes", "notes-1");
  }

  /** Why a link from {@code page} to {@code target} leads nowhere, or null when it is fine. */
  private static String problem(Path page, String target) {
    if (target.isEmpty()) {
      return "empty link";
    }
    if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
      return null; // https:, mailto: ...: not ours to check
    }
    int hash = target.indexOf('#');
    String path = hash < 0 ? target : target.substring(0, hash);
    String anchor = hash < 0 ? null : target.substring(hash + 1);
    Path file = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
    if (path.startsWith("/")) {
      return "absolute path: write it relative to " + page.getFileName();
    }
    if (!Files.exists(file)) {
      return "no such file " + file.getFileName();
    }
    if (anchor == null) {
      return null;
    }
    if (!file.getFileName().toString().endsWith(".md") || Files.isDirectory(file)) {
      return "an anchor into a file that is not Markdown";
    }
    Set<String> anchors = Markdown.anchors(Markdown.lines(file));
    return anchors.contains(anchor) ? null : "no heading with anchor #" + anchor + " in " + file.getFileName();
  }
}
