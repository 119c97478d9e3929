package dev.redlockd.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The contract's input rules, checked before anything reaches a node. */
public final class RequestRules {
  public static final int MAX_RESOURCE_BYTES = 512;
  public static final int MAX_OWNER_BYTES = 256;

  private final EngineConfig config;

  public RequestRules(EngineConfig config) {
    this.config = config;
  }

  public void resource(String resource) {
    if (resource == null || resource.isEmpty()) {
      throw new InvalidRequestException("resource must not be empty");
    }
    int bytes = resource.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_RESOURCE_BYTES) {
      throw new InvalidRequestException("resource is " + bytes + " bytes long, the limit is "
          + MAX_RESOURCE_BYTES);
    }
  }

  public void ttl(String resource, Duration ttl) {
    if (ttl == null) {
      throw new InvalidRequestException("resource '" + resource + "': ttl is required");
    }
    if (ttl.compareTo(config.minTtl()) < 0 || ttl.compareTo(config.maxTtl()) > 0) {
      throw new InvalidRequestException("resource '" + resource + "': ttl " + ttl.toMillis()
          + "ms is outside [" + config.minTtl().toMillis() + "ms, " + config.maxTtl().toMillis() + "ms]");
    }
  }

  public void waitTime(String resource, Duration wait) {
    if (wait.isNegative()) {
      throw new InvalidRequestException("resource '" + resource + "': wait must not be negative");
    }
  }

  /** A token the caller sent; {@code required} for every RPC but Acquire. */
  public void token(String resource, String token, boolean required) {
    if (token.isEmpty() && !required) {
      return;
    }
    if (!LockToken.isWellFormed(token)) {
      // The message describes the rule, never the token itself.
      throw new InvalidRequestException("resource '" + resource + "': token must be "
          + LockToken.MIN_LENGTH + " to " + LockToken.MAX_LENGTH
          + " characters of the base64url alphabet (A-Z a-z 0-9 - _), got " + token.length() + " characters");
    }
  }

  public void owner(String resource, String owner) {
    int bytes = owner.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_OWNER_BYTES) {
      throw new InvalidRequestException("resource '" + resource + "': owner is " + bytes
          + " bytes long, the limit is " + MAX_OWNER_BYTES);
    }
  }
}
