package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.engine.Grant;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HeldLeasesTest {
  private final AtomicLong now = new AtomicLong();
  private final HeldLeases leases = new HeldLeases(now::get);

  private Grant grant(String resource, String token, Duration validity) {
    return new Grant(resource, token, validity, 1);
  }

  private void hold(String identity, String resource, String token, Duration validity) throws Quotas.Exhausted {
    leases.granted(identity, grant(resource, token, validity), leases.reserve(identity, resource, "", 2));
  }

  @Test
  void anIdentityPastItsLimitIsRefusedWhileAnotherIsServed() throws Exception {
    hold("a", "r1", "t1", Duration.ofSeconds(10));
    hold("a", "r2", "t2", Duration.ofSeconds(10));
    assertThatThrownBy(() -> leases.reserve("a", "r3", "", 2)).isInstanceOf(Quotas.Exhausted.class)
        .hasMessageContaining("'a'").hasMessageContaining("2 held leases");
    hold("b", "r3", "t3", Duration.ofSeconds(10));
    assertThat(leases.count("b")).isEqualTo(1);
  }

  @Test
  void aReleaseOrTheEndOfValidityGivesTheSlotBack() throws Exception {
    hold("a", "r1", "t1", Duration.ofSeconds(10));
    hold("a", "r2", "t2", Duration.ofSeconds(1));
    leases.released("a", "r1", "t1");
    assertThat(leases.count("a")).isEqualTo(1);
    hold("a", "r3", "t3", Duration.ofSeconds(10));
    now.addAndGet(Duration.ofSeconds(2).toNanos()); // r2's validity is over
    hold("a", "r4", "t4", Duration.ofSeconds(10));
    assertThat(leases.count("a")).isEqualTo(2);
  }

  @Test
  void aRenewalKeepsALeaseCountedAndASameTokenAcquireNeedsNoRoom() throws Exception {
    hold("a", "r1", "t1", Duration.ofSeconds(1));
    hold("a", "r2", "t2", Duration.ofSeconds(10));
    now.addAndGet(Duration.ofMillis(900).toNanos());
    leases.renewed("a", grant("r1", "t1", Duration.ofSeconds(1)));
    now.addAndGet(Duration.ofMillis(900).toNanos());
    assertThatThrownBy(() -> leases.reserve("a", "r3", "", 2)).isInstanceOf(Quotas.Exhausted.class);
    Quotas.Slot refresh = leases.reserve("a", "r1", "t1", 2);
    leases.granted("a", grant("r1", "t1", Duration.ofSeconds(1)), refresh);
    assertThat(leases.count("a")).isEqualTo(2);
  }
}
