package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;

class PolicyParserTest {
  static final String TWO_TEAMS = """
      {
        "version": 1,
        "default_limits": {"held_leases": 100, "keepalive_streams": 20, "waiting_acquires": 10},
        "identities": [
          {"identity": "spiffe://corp/team-a/*", "lock": ["team-a/"], "describe": ["team-a/", "shared/"]},
          {"identity": "spiffe://corp/team-b/*", "lock": ["team-b/"], "describe": ["team-b/"],
           "limits": {"held_leases": 5}},
          {"identity": "spiffe://corp/team-a/batch", "lock": ["team-a/batch/"]},
          {"identity": "ops", "describe": [""], "force_release": [""]}
        ]
      }
      """;

  @Test
  void twoTeamsLockOnlyTheirOwnPrefixes() throws Exception {
    Policy policy = PolicyParser.parse(TWO_TEAMS);
    assertThat(policy.size()).isEqualTo(4);
    assertThat(policy.allows("spiffe://corp/team-a/api", Permission.LOCK, "team-a/orders")).isTrue();
    assertThat(policy.allows("spiffe://corp/team-a/api", Permission.LOCK, "team-b/orders")).isFalse();
    assertThat(policy.allows("spiffe://corp/team-a/api", Permission.DESCRIBE, "shared/x")).isTrue();
    assertThat(policy.allows("spiffe://corp/team-a/api", Permission.FORCE_RELEASE, "team-a/x")).isFalse();
    assertThat(policy.allows("ops", Permission.FORCE_RELEASE, "anything")).isTrue();
    assertThat(policy.allows("ops", Permission.LOCK, "anything")).isFalse();
  }

  @Test
  void exactIdentityGovernsOverWildcardAndGrantsAreNotMerged() throws Exception {
    Policy policy = PolicyParser.parse(TWO_TEAMS);
    assertThat(policy.allows("spiffe://corp/team-a/batch", Permission.LOCK, "team-a/batch/1")).isTrue();
    assertThat(policy.allows("spiffe://corp/team-a/batch", Permission.LOCK, "team-a/orders")).isFalse();
  }

  @Test
  void unmatchedIdentityMayDoNothingAndHoldNothing() throws Exception {
    Policy policy = PolicyParser.parse(TWO_TEAMS);
    assertThat(policy.allows("spiffe://other/x", Permission.DESCRIBE, "team-a/x")).isFalse();
    assertThat(policy.limitsFor("spiffe://other/x")).isEqualTo(Limits.NONE);
  }

  @Test
  void limitsFallBackToDefaultLimitsThenBuiltIns() throws Exception {
    Policy policy = PolicyParser.parse(TWO_TEAMS);
    assertThat(policy.limitsFor("spiffe://corp/team-b/x")).isEqualTo(new Limits(5, 20, 10, 1_000));
    assertThat(policy.limitsFor("ops")).isEqualTo(new Limits(100, 20, 10, 1_000));
    Policy bare = PolicyParser.parse("{\"version\": 1, \"identities\": [{\"identity\": \"*\"}]}");
    assertThat(bare.limitsFor("anyone")).isEqualTo(Limits.DEFAULT);
  }

  @Test
  void sensitiveNamesMarkThePrefixesWhoseNamesStayOutOfTraces() throws Exception {
    Policy policy = PolicyParser.parse("""
        {"version": 2, "sensitive_names": ["payroll/", "hr/reviews/"],
         "identities": [{"identity": "*", "lock": [""]}]}
        """);
    assertThat(policy.nameIsSensitive("payroll/2026-11")).isTrue();
    assertThat(policy.nameIsSensitive("hr/reviews/alice")).isTrue();
    assertThat(policy.nameIsSensitive("hr/holidays")).isFalse();
    assertThat(PolicyParser.parse(TWO_TEAMS).nameIsSensitive("team-a/orders")).isFalse();
    assertThatThrownBy(() -> PolicyParser.parse(
        "{\"version\": 2, \"sensitive_names\": \"payroll/\", \"identities\": []}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("sensitive_names");
  }

  @Test
  void rejectsUnknownKeysNamingWhere() {
    assertThatThrownBy(() -> PolicyParser.parse(
        "{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"lokc\": [\"x\"]}]}"))
        .isInstanceOf(PolicyException.class)
        .hasMessageContaining("identities[0]").hasMessageContaining("lokc");
  }

  @Test
  void rejectsMalformedFiles() {
    String[] bad = {
      "", "[]", "{}", "{\"version\": 3, \"identities\": []}", "{\"version\": \"1\", \"identities\": []}",
      "{\"version\": 1}", "{\"version\": 1, \"identities\": {}}",
      "{\"version\": 1, \"identities\": [{\"lock\": []}]}",
      "{\"version\": 1, \"identities\": [{\"identity\": \"\"}]}",
      "{\"version\": 1, \"identities\": [{\"identity\": \"a*b\"}]}",
      "{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"lock\": \"x\"}]}",
      "{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"lock\": [1]}]}",
      "{\"version\": 1, \"identities\": [{\"identity\": \"a\"}, {\"identity\": \"a\"}]}",
      "{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"limits\": {\"held_leases\": -1}}]}",
      "{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"limits\": {\"held_leases\": 1.5}}]}",
      "{\"version\": 1, \"identities\": []} trailing",
      "{\"version\": 1, \"identities\": [],}",
      "{version: 1, \"identities\": []}",
    };
    for (String text : bad) {
      assertThatThrownBy(() -> PolicyParser.parse(text)).as(text).isInstanceOf(PolicyException.class);
    }
  }

  /** Random edits of a valid file: each one is a whole policy or a PolicyException, nothing else. */
  @Test
  void fuzzedFilesLoadWholeOrFailCleanly() {
    Random random = new Random(19);
    String alphabet = "{}[]\":,01*/ -abcdefghijklmnopqrstuvwxyz_";
    int loaded = 0;
    int refused = 0;
    for (int i = 0; i < 5_000; i++) {
      StringBuilder text = new StringBuilder(TWO_TEAMS);
      for (int edits = 1 + random.nextInt(3); edits > 0; edits--) {
        int at = random.nextInt(text.length());
        switch (random.nextInt(3)) {
          case 0 -> text.deleteCharAt(at);
          case 1 -> text.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
          default -> text.setCharAt(at, alphabet.charAt(random.nextInt(alphabet.length())));
        }
      }
      try {
        Policy policy = PolicyParser.parse(text.toString());
        assertThat(policy.size()).isBetween(0, 4);
        loaded++;
      } catch (PolicyException e) {
        // One line that says where: the policy as a whole, or the entry at fault.
        assertThat(e.getMessage()).matches("(policy|identities|default_limits)[^\n]*");
        refused++;
      }
    }
    assertThat(loaded).isPositive(); // whitespace edits and the like still load
    assertThat(refused).isPositive();
  }

  @Test
  void aTruncatedFileIsRefusedInOneLineWithoutAnExceptionClassName() {
    assertThatThrownBy(() -> PolicyParser.parse(TWO_TEAMS.substring(0, TWO_TEAMS.length() / 2)))
        .isInstanceOf(PolicyException.class)
        .hasMessageStartingWith("policy: not valid JSON: ")
        .hasMessageNotContaining("Exception")
        .hasMessageNotContaining("\n");
  }

  static final String ELECTIONS_V2 = """
      {
        "version": 2,
        "default_limits": {"election_streams": 3},
        "identities": [
          {"identity": "scheduler", "lock": ["jobs/"], "campaign": ["scheduler/"], "observe": ["scheduler/"]},
          {"identity": "dashboard", "describe": ["jobs/"], "observe": [""], "limits": {"election_streams": 50}}
        ]
      }
      """;

  /** Version 1 files keep their meaning: lock prefixes cover Campaign, describe prefixes Leader and Observe. */
  @Test
  void versionOneLockAndDescribeAlsoCoverElections() throws Exception {
    Policy policy = PolicyParser.parse(TWO_TEAMS);
    assertThat(policy.allows("spiffe://corp/team-a/api", Permission.CAMPAIGN, "team-a/leader")).isTrue();
    assertThat(policy.allows("spiffe://corp/team-a/api", Permission.CAMPAIGN, "shared/leader")).isFalse();
    assertThat(policy.allows("spiffe://corp/team-a/api", Permission.OBSERVE, "shared/leader")).isTrue();
    assertThat(policy.allows("ops", Permission.OBSERVE, "anything")).isTrue();
    assertThat(policy.allows("ops", Permission.CAMPAIGN, "anything")).isFalse();
    assertThatThrownBy(() -> PolicyParser.parse(
        "{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"campaign\": [\"x\"]}]}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("unknown key \"campaign\"");
  }

  /** Version 2 gives elections their own grants: lock and describe no longer reach them. */
  @Test
  void versionTwoGrantsCampaignAndObserveOnTheirOwn() throws Exception {
    Policy policy = PolicyParser.parse(ELECTIONS_V2);
    assertThat(policy.allows("scheduler", Permission.LOCK, "jobs/1")).isTrue();
    assertThat(policy.allows("scheduler", Permission.CAMPAIGN, "jobs/1")).isFalse();
    assertThat(policy.allows("scheduler", Permission.CAMPAIGN, "scheduler/leader")).isTrue();
    assertThat(policy.allows("scheduler", Permission.OBSERVE, "scheduler/leader")).isTrue();
    assertThat(policy.allows("dashboard", Permission.OBSERVE, "scheduler/leader")).isTrue();
    assertThat(policy.allows("dashboard", Permission.CAMPAIGN, "scheduler/leader")).isFalse();
    assertThat(policy.allows("dashboard", Permission.DESCRIBE, "scheduler/leader")).isFalse();
    assertThat(policy.limitsFor("scheduler").electionStreams()).isEqualTo(3);
    assertThat(policy.limitsFor("dashboard").electionStreams()).isEqualTo(50);
    assertThat(policy.limitsFor("dashboard").keepAliveStreams()).isEqualTo(Limits.DEFAULT.keepAliveStreams());
  }
}
