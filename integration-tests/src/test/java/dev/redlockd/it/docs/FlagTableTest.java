package dev.redlockd.it.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.server.ServerConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine;

/**
 * docs/operating.md's flag table lists exactly the flags the server's {@code --help} prints,
 * and each flag's environment variable is the one the server reads. The usage text is made
 * in-process, by the same picocli command the server's {@code --help} prints.
 */
class FlagTableTest {
  private static final String PAGE = "docs/operating.md";
  /** An option line of picocli's usage: "  -h, --help ..." or "      --port=<port> ...". */
  private static final Pattern USAGE_OPTION = Pattern.compile("^ {1,8}(?:(-[A-Za-z]), )?(--[a-z][a-z0-9-]*)");
  private static final Pattern CODE = Pattern.compile("`(-{1,2}[A-Za-z][A-Za-z0-9-]*)`");
  private static final Pattern ENV_DEFAULT = Pattern.compile("^\\$\\{env:(\\w+):-.*}$");

  @Test
  void theFlagTableListsExactlyTheFlagsOfHelp() {
    CommandLine command = new CommandLine(new ServerConfig());
    String usage = command.getUsageMessage(CommandLine.Help.Ansi.OFF);
    Set<String> help = new LinkedHashSet<>();
    for (String line : usage.lines().toList()) {
      Matcher m = USAGE_OPTION.matcher(line);
      if (m.find()) {
        if (m.group(1) != null) {
          help.add(m.group(1));
        }
        help.add(m.group(2));
      }
    }
    assertThat(help).as("flags in --help").contains("--port", "--redis", "--help", "-h", "--version", "-V")
        .hasSizeGreaterThan(20);

    Map<String, String> table = flagTable();
    assertThat(table.keySet()).as(PAGE + "'s flag table against --help:\n" + usage)
        .containsExactlyInAnyOrderElementsOf(help);

    List<String> wrongEnvironment = new ArrayList<>();
    for (OptionSpec option : command.getCommandSpec().options()) {
      if (option.usageHelp() || option.versionHelp() || option.hidden()) {
        continue; // a hidden flag is a removed one, kept only to refuse it with the reason
      }
      Matcher env = ENV_DEFAULT.matcher(option.defaultValueString(false));
      assertThat(env.matches()).as(option.longestName() + " reads an environment variable").isTrue();
      String documented = table.get(option.longestName());
      if (!("`" + env.group(1) + "`").equals(documented)) {
        wrongEnvironment.add(option.longestName() + ": reads " + env.group(1) + ", the table says " + documented);
      }
    }
    assertThat(wrongEnvironment).as("environment variables in " + PAGE).isEmpty();
  }

  /** Each flag in the table's first column, with its row's environment column. */
  private static Map<String, String> flagTable() {
    Markdown docs = Markdown.ofRepository();
    List<String> lines = Markdown.lines(docs.root.resolve(PAGE));
    int header = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("| flag | environment |")) {
        assertThat(header).as("one flag table in " + PAGE).isEqualTo(-1);
        header = i;
      }
    }
    assertThat(header).as("a table headed | flag | environment | in " + PAGE).isNotNegative();
    Map<String, String> flags = new LinkedHashMap<>();
    for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
      String[] cells = lines.get(i).split("\\|");
      Matcher m = CODE.matcher(cells[1]);
      int found = 0;
      while (m.find()) {
        found++;
        assertThat(flags.put(m.group(1), cells[2].strip())).as("%s listed once", m.group(1)).isNull();
      }
      assertThat(found).as("a flag in row " + lines.get(i)).isPositive();
    }
    return flags;
  }
}
