package dev.redlockd.node;

import java.util.ArrayList;
import java.util.List;

/** Several script calls sent as one; each keeps its own future and deadline. */
final class BatchCall extends NodeCall {
  final List<NodeCall> parts;
  private final ScriptBatch batch;
  private final List<ScriptBatch.Op> ops;

  BatchCall(ScriptBatch batch, List<NodeCall> parts) {
    super(null, null);
    this.batch = batch;
    this.parts = parts;
    this.ops = new ArrayList<>(parts.size());
    for (NodeCall part : parts) {
      ops.add(part.op());
    }
    this.deadline = parts.get(0).deadline;
  }

  @Override
  List<String> command() {
    return batch.command("EVALSHA", ops);
  }

  @Override
  List<String> fallback() {
    return batch.command("EVAL", ops);
  }

  @Override
  String sha() {
    return batch.script().sha1();
  }

  @Override
  void fail(Throwable failure) {
    parts.forEach(part -> part.result.completeExceptionally(failure));
  }
}
