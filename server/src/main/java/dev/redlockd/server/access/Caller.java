package dev.redlockd.server.access;

import io.grpc.Context;

/**
 * Who the current call comes from, as the access policy knows it: set by {@link AuthInterceptor}
 * for the calls it lets through, absent when the server runs without a policy. It keeps how the
 * caller proved its identity, so that every later check finds the identity again under the rules
 * in force then (a token removed from the token file ends the call's standing); it never prints
 * that credential.
 */
public final class Caller {
  private static final Context.Key<Caller> KEY = Context.key("redlockd-caller");

  private final String identity;
  private final String peer;
  private final Credential credential;

  Caller(String identity, String peer, Credential credential) {
    this.identity = identity;
    this.peer = peer;
    this.credential = credential;
  }

  /** The current call's caller, or null on a server without a policy. */
  public static Caller current() {
    return KEY.get();
  }

  /** The identity the call was made as, when it began. */
  public String identity() {
    return identity;
  }

  /** The peer address (and certificate subject), for log lines. */
  public String peer() {
    return peer;
  }

  Credential credential() {
    return credential;
  }

  Context attachTo(Context context) {
    return context.withValue(KEY, this);
  }

  @Override
  public String toString() {
    return "Caller[" + Printable.of(identity) + " from " + peer + "]";
  }
}
