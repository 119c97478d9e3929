package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class QuotasTest {
  @Test
  void refusesPastTheLimitNamingIdentityAndLimitWhileOthersStillGetSlots() throws Exception {
    Quotas quotas = new Quotas("held leases");
    Quotas.Slot first = quotas.take("team-a", 2);
    quotas.take("team-a", 2);
    assertThatThrownBy(() -> quotas.take("team-a", 2))
        .isInstanceOf(Quotas.Exhausted.class)
        .hasMessage("identity 'team-a' has reached its limit of 2 held leases");
    assertThat(quotas.take("team-b", 2)).isNotNull();
    first.close();
    assertThat(quotas.take("team-a", 2)).isNotNull();
  }

  @Test
  void policyLimitsApplyPerIdentity() throws Exception {
    Policy policy = PolicyParser.parse(PolicyParserTest.TWO_TEAMS); // team-b: 5 held leases, others 100
    Quotas quotas = new Quotas("held leases");
    for (int i = 0; i < 5; i++) {
      quotas.take("spiffe://corp/team-b/x", policy, Limits::heldLeases);
    }
    assertThatThrownBy(() -> quotas.take("spiffe://corp/team-b/x", policy, Limits::heldLeases))
        .hasMessageContaining("limit of 5 held leases");
    assertThat(quotas.take("spiffe://corp/team-a/api", policy, Limits::heldLeases)).isNotNull();
  }

  @Test
  void closingASlotTwiceGivesBackOne() throws Exception {
    Quotas quotas = new Quotas("streams");
    Quotas.Slot slot = quotas.take("a", 5);
    quotas.take("a", 5);
    slot.close();
    slot.close();
    assertThat(quotas.count("a")).isEqualTo(1);
  }

  @Test
  void limitZeroRefusesEverything() {
    assertThatThrownBy(() -> new Quotas("waiting acquires").take("a", 0)).isInstanceOf(Quotas.Exhausted.class);
  }

  @Test
  void concurrentTakersNeverExceedTheLimit() throws Exception {
    Quotas quotas = new Quotas("held leases");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        results.add(pool.submit(() -> {
          try {
            quotas.take("a", 100);
            return true;
          } catch (Quotas.Exhausted e) {
            return false;
          }
        }));
      }
      int granted = 0;
      for (Future<Boolean> result : results) {
        granted += result.get() ? 1 : 0;
      }
      assertThat(granted).isEqualTo(100);
      assertThat(quotas.count("a")).isEqualTo(100);
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}
