package dev.redlockd.it.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The repository's Markdown, read the way GitHub renders it, as far as the doc tests need:
 * which lines are inside fenced code blocks, the headings and their anchors, the links.
 */
final class Markdown {
  /** An opening or closing fence: up to 3 spaces of indentation in CommonMark, more inside list items. */
  static final Pattern FENCE = Pattern.compile("^(\\s*)(`{3,}|~{3,})(.*)$");
  private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern LINK = Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
  private static final Pattern INLINE_CODE = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");

  final Path root;

  Markdown(Path root) {
    this.root = root;
  }

  /** The repository root: the first directory above the working directory with proto/ and docs/. */
  static Markdown ofRepository() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isDirectory(dir.resolve("docs")) && Files.isDirectory(dir.resolve("proto"))) {
        return new Markdown(dir);
      }
    }
    throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
  }

  /** README.md and docs/*.md, the pages the doc tests hold to every rule. */
  List<Path> pages() {
    List<Path> pages = new ArrayList<>();
    pages.add(root.resolve("README.md"));
    pages.addAll(list(root.resolve("docs"), "*.md"));
    return pages;
  }

  /** The pages, plus each client's README (clients/&#42;/README.md). */
  List<Path> pagesAndClientReadmes() {
    List<Path> pages = pages();
    try (Stream<Path> dirs = Files.list(root.resolve("clients"))) {
      dirs.map(d -> d.resolve("README.md")).filter(Files::isRegularFile).sorted().forEach(pages::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return pages;
  }

  private static List<Path> list(Path dir, String glob) {
    List<Path> files = new ArrayList<>();
    try (var stream = Files.newDirectoryStream(dir, glob)) {
      stream.forEach(files::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    files.sort(null);
    return files;
  }

  String relative(Path file) {
    return root.relativize(file).toString().replace('\\', '/');
  }

  static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A fenced code block: the 1-based line of its opening fence, and that line. */
  record Block(int line, String opening, String info) {}

  /** For each line, whether it is inside a fenced code block (the fences included). */
  static boolean[] inFence(List<String> lines) {
    boolean[] in = new boolean[lines.size()];
    scan(lines, in, new ArrayList<>());
    return in;
  }

  /** The fenced code blocks of a file, in order. */
  static List<Block> blocks(List<String> lines) {
    List<Block> blocks = new ArrayList<>();
    scan(lines, new boolean[lines.size()], blocks);
    return blocks;
  }

  /** One pass over the file: marks the lines inside fences and collects the blocks they open. */
  private static void scan(List<String> lines, boolean[] in, List<Block> blocks) {
    String open = null;
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = FENCE.matcher(lines.get(i));
      if (open == null) {
        // A backtick fence's info string may not contain a backtick (that is inline code).
        if (m.matches() && !(m.group(2).startsWith("`") && m.group(3).contains("`"))) {
          open = m.group(2);
          in[i] = true;
          blocks.add(new Block(i + 1, lines.get(i), m.group(3).strip()));
        }
      } else {
        in[i] = true;
        if (m.matches() && m.group(2).charAt(0) == open.charAt(0) && m.group(2).length() >= open.length()
            && m.group(3).isBlank()) {
          open = null;
        }
      }
    }
  }

  /** The anchors GitHub gives the headings of a file (duplicates get -1, -2, ...). */
  static Set<String> anchors(List<String> lines) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean[] in = inFence(lines);
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = HEADING.matcher(lines.get(i));
      if (!in[i] && m.matches()) {
        String slug = slug(m.group(2));
        int n = seen.merge(slug, 1, Integer::sum) - 1;
        anchors.add(n == 0 ? slug : slug + "-" + n);
      }
    }
    return anchors;
  }

  /**
   * GitHub's anchor for a heading: its text (links reduced to their text, emphasis and code
   * marks dropped), lowercased, every character but letters, digits, spaces, '-' and '_'
   * dropped, each space made a '-'.
   */
  static String slug(String heading) {
    String text = heading.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1").strip().toLowerCase(Locale.ROOT);
    StringBuilder slug = new StringBuilder();
    text.codePoints().forEach(c -> {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        slug.appendCodePoint(c);
      } else if (c == ' ') {
        slug.append('-');
      }
    });
    return slug.toString();
  }

  /** A link target as written, and the 1-based line it is on. */
  record Link(int line, String target) {}

  /** The inline links and images of a file, outside code blocks and code spans. */
  static List<Link> links(List<String> lines) {
    List<Link> links = new ArrayList<>();
    boolean[] in = inFence(lines);
    for (int i = 0; i < lines.size(); i++) {
      if (in[i]) {
        continue;
      }
      Matcher m = LINK.matcher(INLINE_CODE.matcher(lines.get(i)).replaceAll("code"));
      while (m.find()) {
        links.add(new Link(i + 1, m.group(1)));
      }
    }
    return links;
  }
}
