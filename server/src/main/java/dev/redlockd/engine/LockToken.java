package dev.redlockd.engine;

import java.security.SecureRandom;
import java.util.Base64;

/** Lease tokens: 22 to 64 characters of the base64url alphabet, unguessable. */
public final class LockToken {
  public static final int MIN_LENGTH = 22;
  public static final int MAX_LENGTH = 64;
  /** 192 bits: comfortably above the 128 the contract asks of every token. */
  private static final int GENERATED_BYTES = 24;

  private LockToken() {}

  public static String generate(SecureRandom random) {
    byte[] bytes = new byte[GENERATED_BYTES];
    random.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  public static boolean isWellFormed(String token) {
    if (token == null || token.length() < MIN_LENGTH || token.length() > MAX_LENGTH) {
      return false;
    }
    for (int i = 0; i < token.length(); i++) {
      char c = token.charAt(i);
      boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_';
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
