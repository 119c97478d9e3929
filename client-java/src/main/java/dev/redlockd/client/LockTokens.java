package dev.redlockd.client;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * Lease tokens made on the client side. A client that chooses its token before the first
 * Acquire can retry that Acquire after a lost answer (deadline, reconnect) without leaking a
 * lock or blocking on itself: the server refreshes the lease it already holds.
 *
 * <p>Public for callers of the gRPC API itself (the benchmarks, raw-stub tests, a client of
 * your own), so that their tokens are made as this client makes its own.
 */
public final class LockTokens {
  private static final SecureRandom RANDOM = new SecureRandom();
  /** 192 bits of CSPRNG output; the contract asks for at least 128. */
  private static final int BYTES = 24;

  private LockTokens() {}

  /** A fresh token: 32 characters of the base64url alphabet. */
  public static String newToken() {
    byte[] bytes = new byte[BYTES];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
