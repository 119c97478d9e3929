package dev.redlockd.sim;

/**
 * A status reply ({@code +OK}). Kept apart from a bulk string inside the model because a
 * script sees the two differently ({@code {ok='OK'}} against a plain string); at the
 * {@link dev.redlockd.node.RedisNode} boundary it becomes a String, as the engine's decoder
 * makes it.
 */
public record SimStatus(String text) {
  static final SimStatus OK = new SimStatus("OK");
  static final SimStatus PONG = new SimStatus("PONG");
}
