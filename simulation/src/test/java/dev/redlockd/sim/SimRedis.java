package dev.redlockd.sim;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisErrorReply;
import dev.redlockd.node.RedisNode;
import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One simulated Redis master behind the engine's {@link RedisNode} interface: a
 * {@link SimKeyspace}, a Lua interpreter ({@link SimLua}) and a script cache. Every call
 * answers at once with a completed future; delays, timeouts and lost replies belong to the
 * network model that wraps this class, so nothing here knows about time but the keyspace's
 * clock.
 *
 * <p>Replies take the shapes the engine's own node client gives: Long, String (bulk and status
 * alike), null, List; an error reply fails the future with the same {@link RedisErrorReply}
 * the real client raises, so code that looks at its kind (NOSCRIPT, WRONGPASS) sees no
 * difference.
 */
public final class SimRedis implements RedisNode {
  /**
   * RedisErrorReply's constructor is package-private in dev.redlockd.node (only the decoder
   * makes them); the model opens it rather than invent a look-alike the engine would not
   * recognise.
   */
  private static final Constructor<RedisErrorReply> ERROR_REPLY = errorReplyConstructor();

  private final String name;
  private final SimKeyspace keyspace;
  /** SHA1 (lower case) to source: what EVAL and SCRIPT LOAD cached. FLUSHALL keeps it, a restart does not. */
  private final Map<String, String> scripts = new HashMap<>();
  private SimLua lua;
  private boolean closed;
  private long noscriptReplies;
  /** Scripts this node runs changed (a mutant): by script name, the source it runs instead. */
  private final Map<String, String> mutants = new HashMap<>();

  /** A node on a clock in milliseconds. */
  public SimRedis(String name, LongSupplier clock) {
    this(name, new SimKeyspace(clock));
  }

  /** A node whose keys expire by {@code micros} and whose TIME reads {@code time} (see SimKeyspace). */
  public SimRedis(String name, LongSupplier micros, LongSupplier time) {
    this(name, new SimKeyspace(micros, time));
  }

  private SimRedis(String name, SimKeyspace keyspace) {
    this.name = name;
    this.keyspace = keyspace;
    this.lua = new SimLua(keyspace);
  }

  @Override
  public String name() {
    return name;
  }

  /**
   * As the engine's node client runs a script: EVALSHA, and on NOSCRIPT (first use, or after a
   * restart) EVAL, which caches it again.
   */
  /**
   * A MUTANT, for the simulation only: from now on this node runs {@code mutation} of the
   * engine's script {@code name} wherever the engine asks for it (cached under its own SHA1, so
   * no other node or run sees it).
   */
  synchronized void mutate(LuaScript script, java.util.function.UnaryOperator<String> mutation) {
    String mutated = mutation.apply(script.source());
    if (mutated.equals(script.source())) {
      throw new IllegalArgumentException("the mutation of " + script.name() + ".lua changes nothing");
    }
    mutants.put(script.name(), mutated);
  }

  @Override
  public synchronized CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    String mutant = mutants.get(script.name());
    if (mutant != null) {
      return answer(() -> evalSourceNow(mutant, keys, args));
    }
    return answer(() -> {
      try {
        return evalshaNow(script.sha1(), keys, args);
      } catch (SimError e) {
        if (!e.kind().equals("NOSCRIPT")) {
          throw e;
        }
        return evalSourceNow(script.source(), keys, args);
      }
    });
  }

  /** EVALSHA alone: NOSCRIPT when the script is not cached here. */
  public synchronized CompletableFuture<Object> evalsha(String sha, List<String> keys, List<String> args) {
    return answer(() -> evalshaNow(sha, keys, args));
  }

  /** EVAL: runs the source and caches it. */
  public synchronized CompletableFuture<Object> evalSource(String source, List<String> keys, List<String> args) {
    return answer(() -> evalSourceNow(source, keys, args));
  }

  /**
   * A plain command: the keyspace's commands, and EVAL, EVALSHA and SCRIPT LOAD / EXISTS / FLUSH
   * in their wire form.
   */
  @Override
  public synchronized CompletableFuture<Object> command(String... args) {
    return answer(() -> commandNow(List.of(args)));
  }

  /** The node comes back from a restart without persistence: no data, no cached scripts. */
  public synchronized void restartEmpty() {
    keyspace.clear();
    scripts.clear();
    lua = new SimLua(keyspace);
  }

  /** The node's data, for state checks. Callers must not use it while another thread calls the node. */
  public SimKeyspace keyspace() {
    return keyspace;
  }

  public synchronized boolean scriptCached(String sha) {
    return scripts.containsKey(sha.toLowerCase(Locale.ROOT));
  }

  /** How many times this node answered NOSCRIPT (each is an EVAL fallback for the engine's client). */
  public synchronized long noscriptReplies() {
    return noscriptReplies;
  }

  @Override
  public synchronized void close() {
    closed = true;
  }

  // ---- commands ------------------------------------------------------------------------------

  private Object commandNow(List<String> argv) {
    if (argv.isEmpty()) {
      return keyspace.execute(argv);
    }
    String command = argv.get(0).toUpperCase(Locale.ROOT);
    switch (command) {
      case "EVAL", "EVALSHA": {
        if (argv.size() < 3) {
          throw new SimError("ERR wrong number of arguments for '" + command.toLowerCase(Locale.ROOT) + "' command");
        }
        long numkeys = SimKeyspace.integer(argv.get(2));
        if (numkeys < 0) {
          throw new SimError("ERR Number of keys can't be negative");
        }
        if (numkeys > argv.size() - 3) {
          throw new SimError("ERR Number of keys can't be greater than number of args");
        }
        List<String> keys = argv.subList(3, 3 + (int) numkeys);
        List<String> args = argv.subList(3 + (int) numkeys, argv.size());
        return command.equals("EVAL") ? evalSourceNow(argv.get(1), keys, args) : evalshaNow(argv.get(1), keys, args);
      }
      case "SCRIPT":
        return script(argv);
      default:
        return keyspace.execute(argv);
    }
  }

  private Object script(List<String> argv) {
    String sub = argv.size() < 2 ? "" : argv.get(1).toUpperCase(Locale.ROOT);
    switch (sub) {
      case "LOAD":
        if (argv.size() != 3) {
          throw new SimError("ERR wrong number of arguments for 'script|load' command");
        }
        return cache(argv.get(2));
      case "EXISTS": {
        if (argv.size() < 3) {
          throw new SimError("ERR wrong number of arguments for 'script|exists' command");
        }
        List<Object> found = new ArrayList<>();
        for (String sha : argv.subList(2, argv.size())) {
          found.add(scripts.containsKey(sha.toLowerCase(Locale.ROOT)) ? 1L : 0L);
        }
        return found;
      }
      case "FLUSH":
        // Redis 7.0 drops the cache and starts a new interpreter.
        scripts.clear();
        lua = new SimLua(keyspace);
        return SimStatus.OK;
      default:
        throw new SimError("ERR unknown subcommand '" + (argv.size() < 2 ? "" : argv.get(1)) + "'. Try SCRIPT HELP.");
    }
  }

  private Object evalshaNow(String sha, List<String> keys, List<String> args) {
    String source = scripts.get(sha.toLowerCase(Locale.ROOT));
    if (source == null) {
      noscriptReplies++;
      throw new SimError("NOSCRIPT No matching script. Please use EVAL.");
    }
    return lua.run(source, sha.toLowerCase(Locale.ROOT), keys, args);
  }

  private Object evalSourceNow(String source, List<String> keys, List<String> args) {
    String sha = cache(source);
    return lua.run(source, sha, keys, args);
  }

  /** Caches the source (a script that does not compile is cached anyway: EVAL will report it). */
  private String cache(String source) {
    String sha = SimLua.sha1Hex(source);
    scripts.put(sha, source);
    return sha;
  }

  // ---- replies -------------------------------------------------------------------------------

  private CompletableFuture<Object> answer(Supplier<Object> call) {
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("node " + name + " is closed"));
    }
    try {
      return CompletableFuture.completedFuture(toEngine(call.get()));
    } catch (SimError e) {
      return CompletableFuture.failedFuture(errorReply(e.getMessage()));
    }
  }

  /** The model's reply in the node client's shapes: status as String, nested errors as RedisErrorReply. */
  private static Object toEngine(Object reply) {
    if (reply instanceof SimStatus status) {
      return status.text();
    }
    if (reply instanceof SimError error) {
      return errorReply(error.getMessage());
    }
    if (reply instanceof List<?> list) {
      List<Object> items = new ArrayList<>(list.size());
      for (Object item : list) {
        items.add(toEngine(item));
      }
      return Collections.unmodifiableList(items);
    }
    return reply;
  }

  static RedisErrorReply errorReply(String message) {
    try {
      return ERROR_REPLY.newInstance(message);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make a RedisErrorReply", e);
    }
  }

  private static Constructor<RedisErrorReply> errorReplyConstructor() {
    try {
      Constructor<RedisErrorReply> c = RedisErrorReply.class.getDeclaredConstructor(String.class);
      c.setAccessible(true);
      return c;
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException("RedisErrorReply(String) is gone; update SimRedis", e);
    }
  }

  @Override
  public String toString() {
    return "SimRedis[" + name + "]";
  }
}
