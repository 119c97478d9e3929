package dev.redlockd.node;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** One call to a node: its command, the EVAL form to fall back on after NOSCRIPT (or null), its future. */
class NodeCall {
  private final List<String> command;
  private final List<String> fallback;
  final CompletableFuture<Object> result = new CompletableFuture<>();
  long deadline;
  boolean retried;
  /** Part of a connection's handshake: its reply says nothing about the calls behind it. */
  final boolean setup;

  NodeCall(List<String> command, List<String> fallback) {
    this(command, fallback, false);
  }

  NodeCall(List<String> command, List<String> fallback, boolean setup) {
    this.command = command;
    this.fallback = fallback;
    this.setup = setup;
  }

  List<String> command() {
    return command;
  }

  List<String> fallback() {
    return fallback;
  }

  /** The SHA1 of the script it runs; null for a plain command. */
  String sha() {
    return null;
  }

  /** The script call it makes, when it may join a batch; null for a plain command. */
  ScriptBatch.Op op() {
    return null;
  }

  /** Fails the call (each of its parts, for a batch). */
  void fail(Throwable failure) {
    result.completeExceptionally(failure);
  }
}
