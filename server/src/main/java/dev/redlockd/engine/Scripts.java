package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;

/** The engine's Lua scripts, beside this class and {@link Keys}, which names their keys; loaded once per JVM. */
final class Scripts {
  static final LuaScript ACQUIRE = LuaScript.load(Scripts.class, "acquire");
  static final LuaScript RAISE = LuaScript.load(Scripts.class, "raise");
  static final LuaScript SETTLE = LuaScript.load(Scripts.class, "settle");
  static final LuaScript EXTEND = LuaScript.load(Scripts.class, "extend");
  static final LuaScript RELEASE = LuaScript.load(Scripts.class, "release");
  static final LuaScript ABANDON = LuaScript.load(Scripts.class, "abandon");
  static final LuaScript PROBE = LuaScript.load(Scripts.class, "probe");
  static final LuaScript SEED = LuaScript.load(Scripts.class, "seed");
  static final LuaScript DESCRIBE = LuaScript.load(Scripts.class, "describe");
  static final LuaScript ACQUIRE_PERMIT = LuaScript.load(Scripts.class, "acquire_permit");
  static final LuaScript EXTEND_PERMITS = LuaScript.load(Scripts.class, "extend_permits");
  static final LuaScript DESCRIBE_PERMITS = LuaScript.load(Scripts.class, "describe_permits");
  static final LuaScript FORCE_RELEASE = LuaScript.load(Scripts.class, "force_release");

  private Scripts() {}
}
