package dev.redlockd.engine;

import java.util.List;

/**
 * Key names. A resource's keys share the hash tag {@code {resource}}, so each lock script
 * touches one slot. A lock is one key (token, fence, round ids and owner text, see
 * acquire.lua); its counter key lives a ttl past each take, so a resource leaves nothing behind
 * for good. The node-wide keys describe the node itself (its incarnation, its quarantine, the
 * highest fence it ever granted).
 *
 * <p>Leases live in spaces: the user's locks in the empty one, elections in {@code election:}.
 * A space's keys start with the space before the hash tag, so no resource name of one space can
 * make a key of another; the node-wide keys are shared by all spaces.
 */
final class Keys {
  static final String LOCKS = "";
  static final String ELECTIONS = "election:";

  private final String prefix;
  private final String space;
  // The node-wide keys go with nearly every script call: made once, not per call.
  private final String incarnation;
  private final String fenceMax;

  Keys(String prefix) {
    this(prefix, LOCKS);
  }

  Keys(String prefix, String space) {
    this.prefix = prefix;
    this.space = space;
    this.incarnation = prefix + "node:incarnation";
    this.fenceMax = prefix + "node:fence-max";
  }

  Keys inSpace(String otherSpace) {
    return new Keys(prefix, otherSpace);
  }

  String lock(String resource) {
    return prefix + space + "{" + resource + "}:lock";
  }

  /** The resource's last fence on the node; the name is the one its never-expiring predecessor had, so an upgrade keeps counting from it. */
  String counter(String resource) {
    return prefix + space + "{" + resource + "}:fence";
  }

  /** The pub/sub channel on which release.lua announces that the resource's lock was deleted. */
  String releasedChannel(String resource) {
    return prefix + space + "{" + resource + "}:released";
  }

  /** The pub/sub channel on which an election's changes of leader are announced. */
  String changesChannel(String resource) {
    return prefix + space + "{" + resource + "}:changes";
  }

  String incarnation() {
    return incarnation;
  }

  String fenceMax() {
    return fenceMax;
  }

  String quarantine() {
    return prefix + "node:quarantine";
  }

  String quarantinedSince() {
    return prefix + "node:quarantined-since";
  }

  List<String> forAcquire(String resource) {
    return List.of(lock(resource), incarnation(), counter(resource), fenceMax());
  }

  List<String> forRaise(String resource) {
    return List.of(lock(resource), counter(resource), fenceMax());
  }

  /** Incarnation first, then the lock of each resource, as extend.lua takes them. */
  List<String> forExtend(List<String> resources) {
    List<String> all = new java.util.ArrayList<>(1 + resources.size());
    all.add(incarnation());
    for (String resource : resources) {
      all.add(lock(resource));
    }
    return all;
  }

  /** For release.lua, abandon.lua, describe.lua and force_release.lua alike. */
  List<String> forLock(String resource) {
    return List.of(lock(resource), incarnation());
  }

  List<String> forProbe() {
    return List.of(incarnation(), quarantine(), quarantinedSince(), fenceMax());
  }

  List<String> forSeed() {
    return List.of(incarnation(), quarantinedSince(), quarantine(), fenceMax());
  }
}
