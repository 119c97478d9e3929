package dev.redlockd.engine;

/** The nodes show a membership change at a step this replica's node list(s) would break: it must not start. */
public final class MembershipRefusedException extends RuntimeException {
  public MembershipRefusedException(String message) {
    super(message);
  }
}
