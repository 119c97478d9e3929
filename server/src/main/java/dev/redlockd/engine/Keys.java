package dev.redlockd.engine;

import java.util.List;

/**
 * Key names. A resource's keys share the hash tag {@code {resource}}, so each lock script
 * touches one slot. The node-wide keys describe the node itself (its incarnation, its
 * quarantine, its fencing floor).
 */
final class Keys {
  private final String prefix;

  Keys(String prefix) {
    this.prefix = prefix;
  }

  String lock(String resource) {
    return prefix + "{" + resource + "}:lock";
  }

  String fence(String resource) {
    return prefix + "{" + resource + "}:fence";
  }

  /** The owner text of the resource's lease, for Describe; lives and dies with the lock key. */
  String owner(String resource) {
    return prefix + "{" + resource + "}:owner";
  }

  String incarnation() {
    return prefix + "node:incarnation";
  }

  String floor() {
    return prefix + "node:fence-floor";
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
    return List.of(lock(resource), fence(resource), incarnation(), floor(), fenceMax(), owner(resource));
  }

  List<String> forRaise(String resource) {
    return List.of(lock(resource), fence(resource), fenceMax());
  }

  /** Incarnation first, then lock, fence and owner of each resource, as extend.lua takes them. */
  List<String> forExtend(List<String> resources) {
    List<String> all = new java.util.ArrayList<>(1 + 3 * resources.size());
    all.add(incarnation());
    for (String resource : resources) {
      all.add(lock(resource));
      all.add(fence(resource));
      all.add(owner(resource));
    }
    return all;
  }

  List<String> forRelease(String resource) {
    return List.of(lock(resource), incarnation(), owner(resource));
  }

  List<String> forDescribe(String resource) {
    return List.of(lock(resource), fence(resource), owner(resource), incarnation());
  }

  List<String> forForceRelease(String resource) {
    return List.of(lock(resource), owner(resource), incarnation());
  }

  List<String> forProbe() {
    return List.of(incarnation(), quarantine(), quarantinedSince(), fenceMax());
  }

  List<String> forSeed() {
    return List.of(incarnation(), floor(), quarantinedSince(), quarantine(), fenceMax());
  }
}
