package dev.redlockd.it.support;

import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * The order of the integration test classes, which run two at a time (junit-platform.properties).
 * JUnit's pool hands them out from both ends of this order (it forks them in order, then joins
 * them last first): one thread takes the classes from the front, the other from the back, until
 * they meet. So the long classes that load the machine most come first, one after another on
 * the same thread and never beside one another, while the other thread works through the many
 * short classes, which mostly wait on sockets and timers. The others sit between the two lists,
 * by name. The order changes only how long the run takes: every class runs, whatever its place.
 */
public final class SuiteOrder implements ClassOrderer {
  /**
   * From the front, in this order, on one thread: the conformance run first, which waits for the
   * clients' builds and then runs every language's runner at once (about a core for two
   * minutes), then the other classes that run the clients, then the 60 s chaos run (a core for
   * a minute). The builds run beside the quiet start of the conformance run and the short
   * classes of the other thread, rather than beside the chaos run: the clients' own unit tests
   * time their timers to a few milliseconds.
   */
  static final List<String> FIRST = List.of("ConformanceTest", "ClientExampleTest", "PythonDocsExamplesTest",
      "NodeLeadExampleTest", "ChaosIT");
  /**
   * At the back, taken first by the other thread, last first: short classes that take little CPU
   * (in-process servers, one server and a few calls, no restarts), which run while the clients
   * are being built, whose own unit tests time their timers to a few milliseconds.
   */
  static final List<String> LAST = List.of("MutualExclusionTest", "WaitedGrantTest", "HealthTest",
      "ClientOverNettyTest", "ClientInProcessTest", "StatusCodesOverNettyTest", "StatusCodesInProcessTest",
      "ElectionStatusCodesTest", "ReadmeLeaderUpdatesExampleTest", "ReadmeLeadExampleTest",
      "ReadmeElectionExampleTest", "ReadmeClientExampleTest", "BeliefOracleTest", "PermitHoldsTest",
      "ReadmeClientsTest", "GoExamplesQuotedTest", "CheckerTest", "PermitCheckerTest", "DocLinksTest",
      "DocCodeBlocksTest", "FlagTableTest", "ReadmeTestCommandTest");

  @Override
  public void orderClasses(ClassOrdererContext context) {
    context.getClassDescriptors().sort(Comparator.comparingInt(SuiteOrder::rank)
        .thenComparing(d -> d.getTestClass().getName()));
  }

  private static int rank(ClassDescriptor descriptor) {
    String name = descriptor.getTestClass().getSimpleName();
    int first = FIRST.indexOf(name);
    if (first >= 0) {
      return first - FIRST.size();
    }
    int last = LAST.indexOf(name);
    return last >= 0 ? 1 + last : 0;
  }
}
