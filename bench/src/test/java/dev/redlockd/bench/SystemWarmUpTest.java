package dev.redlockd.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.bench.SystemWarmUp.Window;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When a system's warm-up may end, and how the bench finds a JVM's compiler threads in /proc. */
class SystemWarmUpTest {
  @Test
  void settlesOnceTwoWindowsAgreeAndTheCompilersAreQuiet() {
    assertThat(SystemWarmUp.settled(List.of(new Window(9_000, 0)))).as("one window compares with nothing").isFalse();
    assertThat(SystemWarmUp.settled(List.of(new Window(5_000, 0.4), new Window(9_000, 0.01)))).isFalse();
    assertThat(SystemWarmUp.settled(List.of(new Window(9_000, 0.3), new Window(9_300, 0.01)))).isTrue();
    assertThat(SystemWarmUp.settled(List.of(new Window(9_000, 0.3), new Window(9_300, 0.05))))
        .as("throughput agrees, but the compilers still use 0.05 cores").isFalse();
    assertThat(SystemWarmUp.settled(List.of(new Window(9_000, 0), new Window(9_500, 0))))
        .as("9,000 is 5.3 % below 9,500").isFalse();
    assertThat(SystemWarmUp.settled(List.of(new Window(0, 0), new Window(0, 0)))).as("nothing ran").isFalse();
  }

  @Test
  void describesHowLongItTookAndWhetherItSettled() {
    SystemWarmUp.Result result = new SystemWarmUp.Result(
        List.of(new Window(7_000, 0.5), new Window(9_000, 0.02), new Window(9_100, 0)), 6.2, true);
    assertThat(result.describe())
        .isEqualTo("settled after 6 s (3 windows of 2 s; the last 9,000 and 9,100 cycles/s, compilers 0.00 cores)");
    assertThat(new SystemWarmUp.Result(List.of(new Window(4_000, 0.3)), 60.4, false).describe())
        .startsWith("NOT settled after 60 s (1 windows");
  }

  @Test
  void countsOnlyTheCompilerThreads() {
    String c2 = "4242 (C2 CompilerThre) S 1 4240 4240 0 -1 4194368 100 0 0 0 310 27 0 0 20 0 30 0 100 0 0";
    String c1 = "4243 (C1 CompilerThre) S 1 4240 4240 0 -1 4194368 100 0 0 0 50 3 0 0 20 0 30 0 100 0 0";
    String worker = "4244 (grpc-default-wo) S 1 4240 4240 0 -1 4194368 100 0 0 0 900 90 0 0 20 0 30 0 100 0 0";
    assertThat(CompilerCpu.compilerTicks(c2)).isEqualTo(337);
    assertThat(CompilerCpu.compilerTicks(c1)).isEqualTo(53);
    assertThat(CompilerCpu.compilerTicks(worker)).isZero();
    assertThat(CompilerCpu.compilerTicks("")).as("a thread that ended while read").isZero();
  }

  @Test
  void readsThisJvmsCompilersAndNothingForAProcessThatIsGone() {
    // This JVM compiled the test framework before it got here: at least a tick of it.
    assertThat(CompilerCpu.seconds(ProcessHandle.current().pid())).isPositive();
    assertThat(CompilerCpu.seconds(Long.MAX_VALUE)).isZero();
  }
}
