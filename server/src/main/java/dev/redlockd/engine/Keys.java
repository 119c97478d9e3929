package dev.redlockd.engine;

import java.util.List;

/**
 * Key names. A resource's keys share the hash tag {@code {resource}}, so each lock script
 * touches one slot. A lock is one key (token, fence, round ids and owner text, see
 * acquire.lua); its counter key lives a ttl past each take, so a resource leaves nothing behind
 * for good. The node-wide keys describe the node itself (its incarnation, its quarantine, the
 * highest fence it ever granted).
 */
final class Keys {
  private final String prefix;

  Keys(String prefix) {
    this.prefix = prefix;
  }

  String lock(String resource) {
    return prefix + "{" + resource + "}:lock";
  }

  /** The resource's last fence on the node; the name is the one its never-expiring predecessor had, so an upgrade keeps counting from it. */
  String counter(String resource) {
    return prefix + "{" + resource + "}:fence";
  }

  String incarnation() {
    return prefix + "node:incarnation";
  }

  String fenceMax() {
    return prefix + "node:fence-max";
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
