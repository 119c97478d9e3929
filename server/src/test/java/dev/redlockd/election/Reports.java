package dev.redlockd.election;

import dev.redlockd.engine.LockEngineException;
import java.util.ArrayList;
import java.util.List;

/** Every report a candidacy made to its caller, in order; read from any thread. */
final class Reports implements Candidacy.Listener {
  record Report(Candidacy.Leadership leadership, long mark) {}

  private final List<Report> leading = new ArrayList<>();
  private final List<LockEngineException> lost = new ArrayList<>();
  private int jeopardies;

  @Override
  public synchronized void leading(Candidacy.Leadership leadership, long mark) {
    leading.add(new Report(leadership, mark));
  }

  @Override
  public synchronized void jeopardy(Candidacy.Leadership leadership, LockEngineException cause, long mark) {
    jeopardies++;
  }

  @Override
  public synchronized void lost(LockEngineException cause) {
    lost.add(cause);
  }

  synchronized List<Report> leading() {
    return List.copyOf(leading);
  }

  synchronized List<LockEngineException> lost() {
    return List.copyOf(lost);
  }

  synchronized Report last() {
    return leading.isEmpty() ? null : leading.get(leading.size() - 1);
  }

  synchronized int jeopardies() {
    return jeopardies;
  }
}
