package dev.redlockd.server.access;

/** What a grant allows on the resources under its prefixes; each RPC needs exactly one. */
public enum Permission {
  /** Acquire, Extend, Release, KeepAlive (and the election's Campaign). */
  LOCK("lock"),
  /** Describe (and the election's Leader and Observe). */
  DESCRIBE("describe"),
  /** ForceRelease, which the server must also allow with --allow-force-release. */
  FORCE_RELEASE("force_release");

  private final String key;

  Permission(String key) {
    this.key = key;
  }

  /** The name this permission has in a policy file. */
  public String key() {
    return key;
  }
}
