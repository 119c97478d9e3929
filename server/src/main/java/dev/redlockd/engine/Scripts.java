package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;

/** The engine's Lua scripts, loaded once per JVM. */
final class Scripts {
  static final LuaScript ACQUIRE = LuaScript.load("acquire");
  static final LuaScript RAISE = LuaScript.load("raise");
  static final LuaScript EXTEND = LuaScript.load("extend");
  static final LuaScript RELEASE = LuaScript.load("release");
  static final LuaScript ABANDON = LuaScript.load("abandon");
  static final LuaScript PROBE = LuaScript.load("probe");
  static final LuaScript SEED = LuaScript.load("seed");
  static final LuaScript DESCRIBE = LuaScript.load("describe");
  static final LuaScript FORCE_RELEASE = LuaScript.load("force_release");

  private Scripts() {}
}
