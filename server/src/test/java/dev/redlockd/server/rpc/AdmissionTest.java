package dev.redlockd.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The admission rule: refuse new work only past the bound, at once, with a pushback that spreads the retries. */
class AdmissionTest {
  private static final Duration NODE_TIMEOUT = Duration.ofMillis(50);
  private final AtomicReference<Duration> lateness = new AtomicReference<>(Duration.ZERO);
  private final List<String> refused = new ArrayList<>();

  private Admission admission(Duration bound) {
    return new Admission(lateness::get, bound, NODE_TIMEOUT, new Random(7), refused::add);
  }

  @Test
  void admitsWhileTheRoundsRunWithinTheBound() {
    Admission admission = admission(Duration.ofMillis(25));
    lateness.set(Duration.ofMillis(25));
    assertThat(admission.refusal(Admission.Call.ACQUIRE)).isNull();
    assertThat(refused).isEmpty();
  }

  @Test
  void pastTheBoundRefusesWithUnavailableAndAPushbackTrailerAndCountsIt() {
    Admission admission = admission(Duration.ofMillis(25));
    lateness.set(Duration.ofMillis(30));
    StatusRuntimeException refusal = admission.refusal(Admission.Call.ACQUIRE);
    assertThat(refusal).isNotNull();
    assertThat(refusal.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(refusal.getStatus().getDescription()).contains("overloaded").contains("nothing was done");
    long pushback = Long.parseLong(refusal.getTrailers().get(Admission.PUSHBACK));
    // p = 4 x 30 ms = 120 ms; drawn from [p, 2p)
    assertThat(pushback).isBetween(120L, 239L);
    assertThat(refused).containsExactly("Acquire");
  }

  @Test
  void thePushbackGrowsWithTheBacklogAndSpreadsTheRetries() {
    Admission admission = admission(Duration.ofMillis(25));
    long min = Long.MAX_VALUE;
    long max = 0;
    for (int i = 0; i < 1000; i++) {
      long ms = admission.pushbackMillis(Admission.Call.ACQUIRE, Duration.ofMillis(40));
      min = Math.min(min, ms);
      max = Math.max(max, ms);
    }
    assertThat(min).isBetween(160L, 180L);
    assertThat(max).isBetween(300L, 319L);
    assertThat(admission.pushbackMillis(Admission.Call.ACQUIRE, Duration.ofMillis(5))).as("never below the node timeout").isBetween(50L, 99L);
    assertThat(admission.pushbackMillis(Admission.Call.ACQUIRE, Duration.ofSeconds(30))).as("never past the cap")
        .isBetween(Admission.MAX_PUSHBACK.toMillis(), 2 * Admission.MAX_PUSHBACK.toMillis() - 1);
  }

  @Test
  void aNewStreamWhoseLeaseMayBeRunningOutIsRefusedOnlyPastTwiceTheBoundAndToldToComeBackSooner() {
    Admission admission = admission(Duration.ofMillis(25));
    lateness.set(Duration.ofMillis(40));
    assertThat(admission.refusal(Admission.Call.ACQUIRE)).isNotNull();
    assertThat(admission.refusal(Admission.Call.KEEP_ALIVE)).isNull();
    lateness.set(Duration.ofMillis(500));
    StatusRuntimeException refusal = admission.refusal(Admission.Call.KEEP_ALIVE);
    assertThat(refusal.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(Long.parseLong(refusal.getTrailers().get(Admission.PUSHBACK)))
        .isBetween(Admission.MAX_STREAM_PUSHBACK.toMillis(), 2 * Admission.MAX_STREAM_PUSHBACK.toMillis() - 1);
    assertThat(refused).containsExactly("Acquire", "KeepAlive");
  }

  @Test
  void aZeroBoundTurnsItOff() {
    Admission admission = admission(Duration.ZERO);
    lateness.set(Duration.ofSeconds(5));
    assertThat(admission.refusal(Admission.Call.ACQUIRE)).isNull();
    assertThat(Admission.off().refusal(Admission.Call.KEEP_ALIVE)).isNull();
  }
}
