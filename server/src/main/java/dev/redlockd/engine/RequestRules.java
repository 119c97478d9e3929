package dev.redlockd.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The contract's input rules, checked before anything reaches a node. */
public final class RequestRules {
  public static final int MAX_RESOURCE_BYTES = 512;
  public static final int MAX_OWNER_BYTES = 256;
  /** The most permits a semaphore may have: every Acquire of a permit reads them all on every node. */
  public static final int MAX_PERMITS = 1024;

  private final EngineConfig config;
  /** What the name names, in messages: a resource, or an election. */
  private final String noun;
  /** What the free text is called: a lock's owner, an election's value. */
  private final String ownerNoun;

  public RequestRules(EngineConfig config) {
    this(config, "resource", "owner");
  }

  private RequestRules(EngineConfig config, String noun, String ownerNoun) {
    this.config = config;
    this.noun = noun;
    this.ownerNoun = ownerNoun;
  }

  /** The same rules, in the words of semaphores. */
  RequestRules forSemaphores() {
    return new RequestRules(config, "semaphore", "owner");
  }

  /** A semaphore's N in an Acquire: 1..{@value #MAX_PERMITS}. */
  public void permits(String resource, int permits) {
    if (permits < 1 || permits > MAX_PERMITS) {
      throw new InvalidRequestException(noun + " '" + resource + "': permits is " + Integer.toUnsignedString(permits)
          + ", it must be 1 to " + MAX_PERMITS);
    }
  }

  /** A lease's permit in Extend, Release, KeepAlive or ForceRelease: 0 (a lock) to {@value #MAX_PERMITS}. */
  public void permit(String resource, int permit) {
    if (permit < 0 || permit > MAX_PERMITS) {
      throw new InvalidRequestException(noun + " '" + resource + "': permit is " + Integer.toUnsignedString(permit)
          + ", it must be 0 (a lock) or 1 to " + MAX_PERMITS);
    }
  }

  /** The same rules, in the words of elections: an election's name and its leader's value. */
  RequestRules forElections() {
    return new RequestRules(config, "election", "value");
  }

  public void resource(String resource) {
    if (resource == null || resource.isEmpty()) {
      throw new InvalidRequestException(noun + " must not be empty");
    }
    int bytes = resource.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_RESOURCE_BYTES) {
      throw new InvalidRequestException(noun + " is " + bytes + " bytes long, the limit is "
          + MAX_RESOURCE_BYTES);
    }
  }

  public void ttl(String resource, Duration ttl) {
    if (ttl == null) {
      throw new InvalidRequestException(noun + " '" + resource + "': ttl is required");
    }
    if (ttl.compareTo(config.minTtl()) < 0 || ttl.compareTo(config.maxTtl()) > 0) {
      throw new InvalidRequestException(noun + " '" + resource + "': ttl " + ttl.toMillis()
          + "ms is outside [" + config.minTtl().toMillis() + "ms, " + config.maxTtl().toMillis() + "ms]");
    }
  }

  public void waitTime(String resource, Duration wait) {
    if (wait.isNegative()) {
      throw new InvalidRequestException(noun + " '" + resource + "': wait must not be negative");
    }
  }

  /** A token the caller sent; {@code required} for every RPC but Acquire. */
  public void token(String resource, String token, boolean required) {
    if (token.isEmpty() && !required) {
      return;
    }
    if (!LockToken.isWellFormed(token)) {
      // The message describes the rule, never the token itself.
      throw new InvalidRequestException(noun + " '" + resource + "': token must be "
          + LockToken.MIN_LENGTH + " to " + LockToken.MAX_LENGTH
          + " characters of the base64url alphabet (A-Z a-z 0-9 - _), got " + token.length() + " characters");
    }
  }

  public void owner(String resource, String owner) {
    int bytes = owner.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_OWNER_BYTES) {
      throw new InvalidRequestException(noun + " '" + resource + "': " + ownerNoun + " is " + bytes
          + " bytes long, the limit is " + MAX_OWNER_BYTES);
    }
  }
}
