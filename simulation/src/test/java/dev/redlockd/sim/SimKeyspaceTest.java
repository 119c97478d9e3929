package dev.redlockd.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SimKeyspaceTest {
  /**
   * TIME reads its clock once: a clock that moves past a second between two readings must not
   * make it answer that second's start with the previous second's number (803 s and 0 us, a whole
   * second early, which SimRedisDifferentialTest once met on the wall clock).
   */
  @Test
  void timeAnswersSecondsAndMicrosecondsOfOneReading() {
    AtomicLong next = new AtomicLong(803_999_999L);
    SimKeyspace keyspace = new SimKeyspace(() -> 0L, () -> next.getAndAdd(1));

    assertThat(keyspace.execute("TIME")).isEqualTo(List.of("803", "999999"));
    assertThat(keyspace.execute("TIME")).isEqualTo(List.of("804", "0"));
  }
}
