package dev.redlockd.node;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Several calls of known scripts sent to a node as one script call. What a node's Lua call
 * costs is mostly the call itself (two scripts that do nothing cost 5 to 6 us each, on
 * Redis 7.0, per docs/performance.md), not the few commands inside: so what one pass of an
 * event loop has for a node goes as one call that runs each script in turn and answers one
 * reply per script.
 *
 * <p>A batch is not a transaction: each script runs under {@code pcall}, so one that fails
 * answers its own error and the others still run and answer as they would alone. Redis
 * freezes the clock for the length of one call, so every script in a batch sees the time
 * the batch began: never later than the time it would have seen alone, so an expiry it sets
 * ends no later, and a lease it finds alive was alive when its request was already on the
 * way.
 *
 * <p>Layout of the call: KEYS are every script's keys in order; ARGV[1] is the number of
 * scripts n, then for each script its index in the library, its number of keys and its number
 * of arguments (3 n numbers), then every script's arguments in order.
 */
public final class ScriptBatch {
  /** No scripts: every call goes alone. */
  public static final ScriptBatch NONE = new ScriptBatch(List.of());

  /**
   * At most this many scripts in one call. A lock script runs in about 2 to 4 us inside a
   * batch, so a full batch holds the node for about 100 us: other connections' calls (another
   * loop's, another server's) wait no longer than that behind it.
   */
  static final int MAX_SCRIPTS = 32;
  /**
   * And at most about this many bytes of keys and arguments: a many-lease renewal (up to 128
   * leases) is one script, but costs as much as a full batch of small ones.
   */
  static final int MAX_BYTES = 8 * 1024;

  private final Map<String, Integer> indexBySha = new HashMap<>();
  private final List<LuaScript> scripts;
  private final LuaScript script;

  private ScriptBatch(List<LuaScript> scripts) {
    this.scripts = scripts;
    for (int i = 0; i < scripts.size(); i++) {
      indexBySha.put(scripts.get(i).sha1(), i + 1);
    }
    this.script = scripts.isEmpty() ? null : LuaScript.of("batch", source(scripts));
  }

  /** A batch over these scripts; calls of any other script still go alone. */
  public static ScriptBatch of(List<LuaScript> scripts) {
    return new ScriptBatch(List.copyOf(scripts));
  }

  public boolean covers(LuaScript called) {
    return indexBySha.containsKey(called.sha1());
  }

  /** The one script that runs the others; null when this batch covers none. */
  public LuaScript script() {
    return script;
  }

  /** The EVALSHA (or, with {@code command} "EVAL", the EVAL) that runs these calls in order. */
  public List<String> command(String command, List<Op> ops) {
    int keyCount = 0;
    int size = 4 + 3 * ops.size();
    for (Op op : ops) {
      keyCount += op.keys().size();
      size += op.keys().size() + op.args().size();
    }
    List<String> parts = new ArrayList<>(size);
    parts.add(command);
    parts.add(command.equals("EVAL") ? script.source() : script.sha1());
    parts.add(Integer.toString(keyCount));
    for (Op op : ops) {
      parts.addAll(op.keys());
    }
    parts.add(Integer.toString(ops.size()));
    for (Op op : ops) {
      parts.add(Integer.toString(indexBySha.get(op.script().sha1())));
      parts.add(Integer.toString(op.keys().size()));
      parts.add(Integer.toString(op.args().size()));
    }
    for (Op op : ops) {
      parts.addAll(op.args());
    }
    return parts;
  }

  /** One script call that may join a batch. */
  public record Op(LuaScript script, List<String> keys, List<String> args) {
    /** What it adds to a batch's bytes, roughly: its keys and arguments and their headers. */
    int bytes() {
      int bytes = 0;
      for (String key : keys) {
        bytes += key.length() + 16;
      }
      for (String arg : args) {
        bytes += arg.length() + 16;
      }
      return bytes;
    }
  }

  /**
   * The same scripts as a Redis 7 function library ({@code FUNCTION LOAD}), called by {@code
   * FCALL <function>} with the same keys and arguments as the batch: the scripts' table is built
   * once, when the library loads, not at every call. RedisCpuPerCycle measures the two; the
   * batch script stays, as it needs nothing loaded ahead (see docs/performance.md).
   */
  public String functionLibrary(String library, String function) {
    return "#!lua name=" + library + "\n" + definitions(scripts) + "redis.register_function('" + function
        + "', function(KEYS, ARGV)\n" + DISPATCH + "end)\n";
  }

  private static String source(List<LuaScript> scripts) {
    return "-- redlockd's scripts in one call (node.ScriptBatch): each one a function of its\n"
        + "-- own KEYS and ARGV, run in turn under pcall.\n" + definitions(scripts) + DISPATCH;
  }

  private static String definitions(List<LuaScript> scripts) {
    StringBuilder lua = new StringBuilder("local scripts = {}\n");
    for (int i = 0; i < scripts.size(); i++) {
      lua.append("-- ").append(scripts.get(i).name()).append('\n')
          .append("scripts[").append(i + 1).append("] = function(KEYS, ARGV)\n")
          .append(scripts.get(i).source())
          .append("\nend\n");
    }
    return lua.toString();
  }

  private static final String DISPATCH = """
      local n = tonumber(ARGV[1])
      local replies = {}
      local k, a = 0, 1 + 3 * n
      for i = 1, n do
        local head = 3 * i - 1
        local run, nkeys, nargs = scripts[tonumber(ARGV[head])], tonumber(ARGV[head + 1]), tonumber(ARGV[head + 2])
        local keys, args = {}, {}
        for j = 1, nkeys do
          keys[j] = KEYS[k + j]
        end
        for j = 1, nargs do
          args[j] = ARGV[a + j]
        end
        k, a = k + nkeys, a + nargs
        local ok, reply = pcall(run, keys, args)
        if not ok then
          -- redis.call's errors are tables with an err field; Lua's own are strings.
          if type(reply) == 'table' and reply.err then
            replies[i] = reply
          else
            replies[i] = redis.error_reply(tostring(reply))
          end
        elseif reply == nil then
          replies[i] = false
        else
          replies[i] = reply
        end
      end
      return replies
      """;
}
