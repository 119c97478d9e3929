package dev.redlockd.server.access;

/**
 * What a grant allows on the resources under its prefixes; each RPC needs exactly one. Elections
 * have their own two: a version 1 policy file gives them its {@code lock} and {@code describe}
 * prefixes (what those covered before elections had a permission of their own), a version 2 file
 * names them.
 */
public enum Permission {
  /** Acquire, Extend, Release, KeepAlive. */
  LOCK("lock"),
  /** Describe. */
  DESCRIBE("describe"),
  /** ForceRelease, which the server must also allow with --allow-force-release. */
  FORCE_RELEASE("force_release"),
  /** Campaign: standing for an election of that name (version 1: the lock prefixes). */
  CAMPAIGN("campaign"),
  /** Leader and Observe: reading who leads an election of that name (version 1: the describe prefixes). */
  OBSERVE("observe");

  private final String key;

  Permission(String key) {
    this.key = key;
  }

  /** The name this permission has in a policy file. */
  public String key() {
    return key;
  }
}
