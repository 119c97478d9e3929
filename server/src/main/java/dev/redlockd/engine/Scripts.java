package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.ScriptBatch;
import java.util.ArrayList;
import java.util.List;

/** The engine's Lua scripts, beside this class and {@link Keys}, which names their keys; loaded once per JVM. */
final class Scripts {
  /** Every script below, in the order loaded: the batch runs any of them (node.ScriptBatch). */
  private static final List<LuaScript> ALL = new ArrayList<>();

  static final LuaScript ACQUIRE = load("acquire");
  static final LuaScript RAISE = load("raise");
  static final LuaScript SETTLE = load("settle");
  static final LuaScript EXTEND = load("extend");
  static final LuaScript RELEASE = load("release");
  static final LuaScript ABANDON = load("abandon");
  static final LuaScript PROBE = load("probe");
  static final LuaScript SEED = load("seed");
  static final LuaScript DESCRIBE = load("describe");
  static final LuaScript ACQUIRE_PERMIT = load("acquire_permit");
  static final LuaScript EXTEND_PERMITS = load("extend_permits");
  static final LuaScript DESCRIBE_PERMITS = load("describe_permits");
  static final LuaScript FORCE_RELEASE = load("force_release");
  static final LuaScript QUARANTINE = load("quarantine");
  static final LuaScript RESTORE = load("restore");

  /** The one script call a node gets for several of these made in one pass of an event loop. */
  static final ScriptBatch BATCH = ScriptBatch.of(ALL);

  private Scripts() {}

  private static LuaScript load(String name) {
    LuaScript script = LuaScript.load(Scripts.class, name);
    ALL.add(script);
    return script;
  }
}
