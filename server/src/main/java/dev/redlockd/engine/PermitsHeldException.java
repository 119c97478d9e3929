package dev.redlockd.engine;

/**
 * A permit round was refused: the permit tried is held by another token on too many nodes, or
 * this token holds another permit of the semaphore. Carries what the nodes said about the other
 * permits, from which the next round picks its permit (see {@link PermitRounds}).
 */
final class PermitsHeldException extends LockHeldException {
  /** The permit this token holds on the most voting nodes that said so; 0 when none did. */
  private final int mine;
  /** For permit k (index k - 1), on how many voting nodes it is free of other tokens, as read. */
  private final int[] freeOn;

  PermitsHeldException(String resource, int permits, int tried, int yes, int voters, boolean silentCouldMakeAQuorum,
      int mine, int[] freeOn) {
    super("semaphore '" + resource + "': no free permit of " + permits + " (permit " + tried + ": " + yes + " of "
        + voters + " voting nodes granted it)", silentCouldMakeAQuorum);
    this.mine = mine;
    this.freeOn = freeOn;
  }

  int mine() {
    return mine;
  }

  int freeOn(int permit) {
    return freeOn[permit - 1];
  }

  int permits() {
    return freeOn.length;
  }
}
