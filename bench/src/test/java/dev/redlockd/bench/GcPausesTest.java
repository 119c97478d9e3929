package dev.redlockd.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The server's young pauses as KeepAliveLoad reads them from its -Xlog:gc file. */
class GcPausesTest {
  private static final List<String> LOG = List.of(
      "[0.003s][info][gc] Using G1",
      "[0.439s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 20M->5M(380M) 3.849ms",
      "[2.335s][info][gc] GC(3) Pause Young (Concurrent Start) (Metadata GC Threshold) 20M->11M(380M) 14.624ms",
      "[2.336s][info][gc] GC(4) Concurrent Mark Cycle",
      "[2.363s][info][gc] GC(4) Pause Remark 13M->11M(47M) 8.227ms",
      "[2.388s][info][gc] GC(4) Concurrent Mark Cycle 52.541ms",
      "[4.023s][info][gc] GC(5) Pause Young (Prepare Mixed) (G1 Evacuation Pause) 32M->19M(50M) 128.898ms",
      "[4.087s][info][gc] GC(6) Pause Young (Mixed) (G1 Evacuation Pause) 20M->20M(50M) 22.342ms",
      "[50.829s][info][gc] GC(37) Pause Full (Diagnostic Command) 200M->24M(90M) 93.497ms");

  @Test
  void countsYoungPausesOnlyWithTheirP99AndMax() {
    GcPauses pauses = GcPauses.parse(LOG);
    assertThat(pauses.count()).isEqualTo(4);
    assertThat(pauses.maxMs()).isEqualTo(128.898);
    assertThat(pauses.p99Ms()).isEqualTo(128.898);
    assertThat(pauses.describe()).isEqualTo("p99 128.9 ms, max 128.9 ms (4 pauses)");
  }

  @Test
  void theP99OfManyPausesIsNotTheMax() {
    List<String> lines = new ArrayList<>();
    for (int i = 1; i <= 200; i++) {
      lines.add("[1.0s][info][gc] GC(" + i + ") Pause Young (Normal) (G1 Evacuation Pause) 9M->1M(50M) " + i + ".000ms");
    }
    GcPauses pauses = GcPauses.parse(lines);
    assertThat(pauses.count()).isEqualTo(200);
    assertThat(pauses.p99Ms()).isEqualTo(198.0);
    assertThat(pauses.maxMs()).isEqualTo(200.0);
  }

  @Test
  void aLogWithoutPausesSaysSo() {
    assertThat(GcPauses.parse(List.of("[0.003s][info][gc] Using G1")).describe()).isEqualTo("none logged");
  }

  @Test
  void stealIsTheEighthFieldOfTheCpuLine() {
    long[] steal = MachineCpu.steal("cpu  100 5 50 800 10 1 2 32 0 0");
    assertThat(steal).containsExactly(32, 1000);
    assertThat(MachineCpu.stealShare(new long[] {0, 0}, steal)).isEqualTo(0.032);
  }
}
