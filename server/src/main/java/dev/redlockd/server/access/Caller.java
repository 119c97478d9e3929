package dev.redlockd.server.access;

import io.grpc.Context;

/**
 * Who the current call comes from, as the access policy knows it: set by {@link AuthInterceptor}
 * for the calls it lets through, absent when the server runs without a policy.
 */
public record Caller(String identity, String peer) {
  private static final Context.Key<Caller> KEY = Context.key("redlockd-caller");

  /** The current call's caller, or null on a server without a policy. */
  public static Caller current() {
    return KEY.get();
  }

  Context attachTo(Context context) {
    return context.withValue(KEY, this);
  }
}
