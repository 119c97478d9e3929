package dev.redlockd.node;

import java.util.ArrayList;
import java.util.List;

/** A script call that may go in a {@link ScriptBatch} with others. */
final class ScriptCall extends NodeCall {
  private final ScriptBatch.Op op;

  /** Its EVALSHA and EVAL forms are made only if it goes alone. */
  ScriptCall(ScriptBatch.Op op) {
    super(null, null);
    this.op = op;
  }

  @Override
  List<String> command() {
    return form("EVALSHA", op.script().sha1());
  }

  @Override
  List<String> fallback() {
    return form("EVAL", op.script().source());
  }

  @Override
  String sha() {
    return op.script().sha1();
  }

  private List<String> form(String command, String script) {
    List<String> parts = new ArrayList<>(3 + op.keys().size() + op.args().size());
    parts.add(command);
    parts.add(script);
    parts.add(Integer.toString(op.keys().size()));
    parts.addAll(op.keys());
    parts.addAll(op.args());
    return parts;
  }

  @Override
  ScriptBatch.Op op() {
    return op;
  }
}
