package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The example policies in docs/operating.md's access-control section load, and grant what the
 * page says they grant: each block marked as tested by this class is read out of the page as it
 * stands, so the page cannot drift from the loader.
 */
class DocumentedPolicyTest {
  private static final String PAGE = "docs/operating.md";
  private static final String MARKER = "<!-- tested by DocumentedPolicyTest -->";

  @Test
  void theVersionTwoExampleGivesElectionsTheirOwnGrants() throws Exception {
    Policy policy = PolicyParser.parse(examples().get(0));
    String scheduler = "spiffe://corp/scheduler/eu-1";
    String dashboard = "spiffe://corp/dashboard";
    assertThat(policy.allows(scheduler, Permission.CAMPAIGN, "scheduler/leader")).isTrue();
    assertThat(policy.allows(scheduler, Permission.OBSERVE, "scheduler/leader")).isTrue();
    assertThat(policy.allows(scheduler, Permission.CAMPAIGN, "jobs/leader")).as("lock is not campaign").isFalse();
    assertThat(policy.allows(scheduler, Permission.LOCK, "jobs/nightly")).isTrue();
    assertThat(policy.allows(dashboard, Permission.OBSERVE, "scheduler/leader")).isTrue();
    assertThat(policy.allows(dashboard, Permission.OBSERVE, "anything/else")).isTrue();
    assertThat(policy.allows(dashboard, Permission.CAMPAIGN, "scheduler/leader")).isFalse();
    assertThat(policy.allows(dashboard, Permission.DESCRIBE, "jobs/nightly")).isTrue();
    assertThat(policy.allows(dashboard, Permission.LOCK, "jobs/nightly")).isFalse();
    assertThat(policy.limitsFor(scheduler).electionStreams()).isEqualTo(20);
    assertThat(policy.limitsFor(dashboard).electionStreams()).isEqualTo(500);
    assertThat(policy.limitsFor("spiffe://corp/other")).isEqualTo(Limits.NONE);
  }

  @Test
  void theVersionOneSessionPolicyCoversElectionsWithItsLockAndDescribePrefixes() throws Exception {
    Policy policy = PolicyParser.parse(examples().get(1));
    String payments = "spiffe://corp/payments/billing";
    String search = "spiffe://corp/search/indexer";
    assertThat(policy.size()).isEqualTo(3); // the session logged "(3 entries)"
    assertThat(policy.allows(payments, Permission.LOCK, "payments/invoice-run")).isTrue();
    assertThat(policy.allows(search, Permission.LOCK, "payments/invoice-run")).isFalse();
    assertThat(policy.allows(search, Permission.DESCRIBE, "payments/invoice-run")).isFalse();
    assertThat(policy.allows("ops", Permission.FORCE_RELEASE, "search/reindex")).isTrue();
    assertThat(policy.limitsFor(search).heldLeases()).isEqualTo(2);
    assertThat(policy.allows(payments, Permission.CAMPAIGN, "payments/leader")).isTrue();
    assertThat(policy.allows(payments, Permission.OBSERVE, "shared/leader")).isTrue();
    assertThat(policy.allows(payments, Permission.CAMPAIGN, "shared/leader")).isFalse();
  }

  /** The JSON blocks of the page marked as tested here, in page order. */
  private static List<String> examples() throws Exception {
    List<String> lines = Files.readAllLines(repositoryRoot().resolve(PAGE));
    List<String> blocks = new ArrayList<>();
    for (int i = 0; i + 1 < lines.size(); i++) {
      if (lines.get(i).strip().equals(MARKER)) {
        assertThat(lines.get(i + 1).strip()).as(PAGE + ":" + (i + 2)).isEqualTo("```json");
        StringBuilder block = new StringBuilder();
        int j = i + 2;
        for (; !lines.get(j).strip().equals("```"); j++) {
          block.append(lines.get(j)).append('\n');
        }
        blocks.add(block.toString());
        i = j;
      }
    }
    assertThat(blocks).as("policy examples marked " + MARKER + " in " + PAGE).hasSize(2);
    return blocks;
  }

  private static Path repositoryRoot() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(PAGE)) && Files.isDirectory(dir.resolve("proto"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no " + PAGE + " above " + Path.of("").toAbsolutePath());
  }
}
