package dev.redlockd.server.access;

import java.util.Optional;

/**
 * How a call proved who it is, kept for the call's whole life so that its identity can be found
 * again under the rules in force at each later message and renewal: a token taken out of the token
 * file then no longer names anyone. A bearer credential keeps the token's SHA-256 hash only, never
 * the token, and prints neither.
 */
sealed interface Credential {
  /** The identity this credential names under these tokens, if it still names one. */
  Optional<String> identify(TokenFile tokens);

  /**
   * A verified client certificate: the handshake proved it for the connection's life, and the
   * trusted authorities are not reloaded, so it names the same identity for as long as the call lasts.
   */
  record Certificate(String identity) implements Credential {
    @Override
    public Optional<String> identify(TokenFile tokens) {
      return Optional.of(identity);
    }
  }

  /** A bearer token, known by its hash. */
  final class Bearer implements Credential {
    private final byte[] hash;

    Bearer(String token) {
      this.hash = TokenFile.sha256(token);
    }

    @Override
    public Optional<String> identify(TokenFile tokens) {
      return tokens == null ? Optional.empty() : tokens.identityForHash(hash);
    }

    @Override
    public String toString() {
      return "Bearer[token not shown]";
    }
  }
}
