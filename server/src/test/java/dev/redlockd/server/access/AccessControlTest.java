package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AccessControlTest {
  private static final String GOOD = PolicyParserTest.TWO_TEAMS;

  @TempDir
  Path dir;

  @Test
  void loadsBothFilesOrNamesTheOneThatFails() throws Exception {
    Path policy = Files.writeString(dir.resolve("policy.json"), GOOD);
    Path tokens = Files.writeString(dir.resolve("tokens"), "ops sha256:" + "ab".repeat(32) + "\n");
    AccessControl control = AccessControl.load(policy, tokens);
    assertThat(control.current().policy().size()).isEqualTo(4);
    assertThat(control.current().tokens().size()).isEqualTo(1);
    assertThatThrownBy(() -> AccessControl.load(policy, Files.writeString(dir.resolve("bad"), "ops secret\n")))
        .hasMessageStartingWith("--tokens " + dir.resolve("bad") + ": token file line 1")
        .hasMessageNotContaining("secret");
    assertThatThrownBy(() -> AccessControl.load(dir.resolve("none.json"), null))
        .hasMessage("--policy " + dir.resolve("none.json") + ": no such file");
  }

  @Test
  void aReloadSwapsWholeOrKeepsTheRulesInForce() throws Exception {
    Path policy = Files.writeString(dir.resolve("policy.json"), GOOD);
    AccessControl control = AccessControl.load(policy, null);
    AccessRules before = control.current();
    assertThat(control.reload(true)).isEqualTo(AccessControl.Outcome.UNCHANGED);
    Files.writeString(policy, GOOD.replace("\"team-a/\", \"shared/\"", "\"team-a/\""));
    assertThat(control.reload(true)).isEqualTo(AccessControl.Outcome.LOADED);
    assertThat(control.current()).isNotSameAs(before);
    assertThat(control.current().policy().allows("spiffe://corp/team-a/x", Permission.DESCRIBE, "shared/1"))
        .isFalse();
    AccessRules good = control.current();
    Files.writeString(policy, "{\"version\": 3, \"identities\": []}");
    assertThat(control.reload(true)).isEqualTo(AccessControl.Outcome.REFUSED);
    assertThat(control.reload(true)).as("the same bad bytes are not judged again").isEqualTo(
        AccessControl.Outcome.UNCHANGED);
    assertThat(control.reload(false)).as("SIGHUP judges them again").isEqualTo(AccessControl.Outcome.REFUSED);
    assertThat(control.current()).isSameAs(good);
    Files.delete(policy);
    assertThat(control.reload(true)).isEqualTo(AccessControl.Outcome.REFUSED);
    assertThat(control.current()).isSameAs(good);
  }

  /** Fuzzed edits of a live policy: each loads whole or leaves the previous rules in force, never part of one. */
  @Test
  void fuzzedEditsNeverLeaveAHalfLoadedPolicy() throws Exception {
    Path policy = Files.writeString(dir.resolve("policy.json"), GOOD);
    AccessControl control = AccessControl.load(policy, null);
    Random random = new Random(19);
    String alphabet = "{}[]\":,*0123456789 abcdefghijklmnopqrstuvwxyz_/-\n";
    int loaded = 0;
    for (int i = 0; i < 2_000; i++) {
      StringBuilder text = new StringBuilder(GOOD);
      for (int edits = 1 + random.nextInt(3); edits > 0; edits--) {
        int at = random.nextInt(text.length());
        switch (random.nextInt(3)) {
          case 0 -> text.deleteCharAt(at);
          case 1 -> text.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
          default -> text.setCharAt(at, alphabet.charAt(random.nextInt(alphabet.length())));
        }
      }
      AccessRules before = control.current();
      Files.writeString(policy, text);
      AccessControl.Outcome outcome = control.reload(true);
      boolean parses;
      try {
        PolicyParser.parse(text.toString());
        parses = true;
      } catch (PolicyException e) {
        parses = false;
        assertThat(e.getMessage()).doesNotContain("\n");
      }
      if (outcome == AccessControl.Outcome.LOADED) {
        loaded++;
        assertThat(parses).isTrue();
      } else {
        assertThat(control.current()).isSameAs(before);
        assertThat(parses || outcome == AccessControl.Outcome.UNCHANGED).isEqualTo(
            outcome == AccessControl.Outcome.UNCHANGED);
      }
    }
    assertThat(loaded).as("some edits are still valid policies").isPositive();
  }
}
