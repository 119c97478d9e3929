package dev.redlockd.it.conformance;

import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Starts every language's client build as the test run begins, when the run includes a class
 * that {@link NeedsClientBuilds} (registered in META-INF/services). The builds take a few
 * minutes of CPU: begun at once, they run beside the tests that come before the first such
 * class, which mostly wait on sockets and timers, rather than in front of it.
 */
public final class ClientBuildsAtStart implements TestExecutionListener {
  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    boolean needed = plan.getRoots().stream()
        .flatMap(root -> plan.getDescendants(root).stream())
        .anyMatch(ClientBuildsAtStart::needsBuilds);
    if (needed) {
      ClientBuilds.startAll();
    }
  }

  private static boolean needsBuilds(TestIdentifier test) {
    return test.getSource()
        .filter(ClassSource.class::isInstance)
        .map(source -> ((ClassSource) source).getJavaClass().isAnnotationPresent(NeedsClientBuilds.class))
        .orElse(false);
  }
}
