package dev.redlockd.engine;

import java.util.List;

/**
 * Key names. A resource's keys share the hash tag {@code {resource}}, so each lock script
 * touches one slot. A lock is one key (token, fence, round ids and owner text, see
 * acquire.lua); its counter key lives a ttl past each take, so a resource leaves nothing behind
 * for good. The node-wide keys describe the node itself (its incarnation, its quarantine, the
 * highest fence it ever granted, its id and the clocks recorded on it).
 *
 * <p>Leases live in spaces: the user's locks in the empty one, elections in {@code election:}.
 * A space's keys start with the space before the hash tag, so no resource name of one space can
 * make a key of another; the node-wide keys are shared by all spaces.
 */
final class Keys {
  static final String LOCKS = "";
  static final String ELECTIONS = "election:";
  /**
   * Semaphores: permit k of semaphore R is a lease of its own on {@code semaphore:{R}:permit:k},
   * beside the semaphore's limit key and release channel. Locks start with the hash tag and
   * elections with {@code election:}, so no lock or election name can make one of these keys.
   */
  static final String SEMAPHORES = "semaphore:";

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

  /** The lease's key: the resource's lock for permit 0, else that permit of the semaphore on the resource. */
  String lease(String resource, int permit) {
    return permit == 0 ? lock(resource) : prefix + space + "{" + resource + "}:permit:" + permit;
  }

  /** The lease's fence counter, as {@link #counter} is the lock's; fences rise per (resource, permit). */
  String counter(String resource, int permit) {
    return permit == 0 ? counter(resource) : prefix + space + "{" + resource + "}:fence:" + permit;
  }

  /** The semaphore's N on this node, living at least as long as its longest permit here (see acquire_permit.lua). */
  String limit(String resource) {
    return prefix + space + "{" + resource + "}:limit";
  }

  String incarnation() {
    return incarnation;
  }

  String fenceMax() {
    return fenceMax;
  }

  /** The node's records of which node lists replicas run (membership.lua); per node, not per space. */
  String membership() {
    return incarnation.substring(0, incarnation.length() - "incarnation".length()) + "membership";
  }

  String quarantine() {
    return prefix + "node:quarantine";
  }

  String quarantinedSince() {
    return prefix + "node:quarantined-since";
  }

  /** The node's own id, made by the first probe: what the clock records name it by. */
  String nodeId() {
    return prefix + "node:id";
  }

  /** The nodes' clocks as a server last recorded them on this node (see ClockRecords). */
  String nodeClocks() {
    return prefix + "node:clocks";
  }

  /** restore.lua's keys: a lock's, as acquire.lua's. */
  List<String> forRestore(String resource) {
    return forAcquire(resource);
  }

  /** For restore.lua on a lease that may be a permit: its own key and counter, as acquire.lua takes them. */
  List<String> forRestore(String resource, int permit) {
    return List.of(lease(resource, permit), incarnation(), counter(resource, permit), fenceMax());
  }

  List<String> forAcquire(String resource) {
    return List.of(lock(resource), incarnation(), counter(resource), fenceMax());
  }

  List<String> forRaise(String resource) {
    return forRaise(resource, 0);
  }

  List<String> forRaise(String resource, int permit) {
    return List.of(lease(resource, permit), counter(resource, permit), fenceMax());
  }

  /**
   * For acquire_permit.lua: the permit's own keys as acquire.lua takes them, the limit, then
   * every permit 1..permits (the script reports which it finds held).
   */
  List<String> forAcquirePermit(String resource, int permits, int permit) {
    List<String> all = new java.util.ArrayList<>(5 + permits);
    all.add(lease(resource, permit));
    all.add(incarnation());
    all.add(counter(resource, permit));
    all.add(fenceMax());
    all.add(limit(resource));
    for (int k = 1; k <= permits; k++) {
      all.add(lease(resource, k));
    }
    return all;
  }

  /** For extend_permits.lua: the incarnation, then each permit's key followed by its semaphore's limit. */
  List<String> forExtendPermits(List<String> resources, List<Integer> permits) {
    List<String> all = new java.util.ArrayList<>(1 + 2 * resources.size());
    all.add(incarnation());
    for (int i = 0; i < resources.size(); i++) {
      all.add(lease(resources.get(i), permits.get(i)));
      all.add(limit(resources.get(i)));
    }
    return all;
  }

  /** For describe_permits.lua: the incarnation, the limit, then permits 1..permits. */
  List<String> forDescribePermits(String resource, int permits) {
    List<String> all = new java.util.ArrayList<>(2 + permits);
    all.add(incarnation());
    all.add(limit(resource));
    for (int k = 1; k <= permits; k++) {
      all.add(lease(resource, k));
    }
    return all;
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
    return forLock(resource, 0);
  }

  /** {@link #forLock(String)} for a lease that may be a permit. */
  List<String> forLock(String resource, int permit) {
    return List.of(lease(resource, permit), incarnation());
  }

  List<String> forProbe() {
    return List.of(incarnation(), quarantine(), quarantinedSince(), fenceMax(), nodeId(), nodeClocks());
  }

  List<String> forQuarantine() {
    return List.of(incarnation(), quarantine(), quarantinedSince());
  }

  List<String> forSeed() {
    return List.of(incarnation(), quarantinedSince(), quarantine(), fenceMax());
  }
}
