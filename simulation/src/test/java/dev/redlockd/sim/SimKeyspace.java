package dev.redlockd.sim;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One Redis database of string values, with per-key expiry in milliseconds of simulated time.
 * Only the commands redlockd's scripts and engine send are here, with Redis 7.0's replies and
 * error wording where a caller could reach them (checked against redis-server by
 * SimRedisDifferentialTest).
 *
 * <p>Time comes only from the injected clocks: the one keys expire by, and the one TIME reads
 * (the same clock, unless a model wants a node that hides a step of its clock from TIME). An
 * expired key is gone the moment anything looks
 * at it, as Redis's lazy expiry makes it look to a client (its background sweep is not
 * modelled: nothing a client reads can tell the two apart, except DBSIZE, see there). Like
 * Redis, time stands still while a script runs ({@link #atomically}), so a script never sees a
 * key expire half-way.
 *
 * <p>Not thread-safe: callers serialise (SimRedis does), as Redis runs one command at a time.
 */
public final class SimKeyspace {
  /** A value and its expiry time in clock milliseconds, or {@link #PERSISTENT}. */
  private record Entry(String value, long expireAt) {}

  private static final long PERSISTENT = -1;
  /** Command name to Redis's arity: n means exactly n words, -n at least n (name included). */
  private static final Map<String, Integer> ARITY = Map.ofEntries(
      Map.entry("GET", 2), Map.entry("SET", -3), Map.entry("DEL", -2), Map.entry("EXISTS", -2),
      Map.entry("PEXPIRE", -3), Map.entry("PTTL", 2), Map.entry("INCR", 2), Map.entry("FLUSHALL", -1),
      Map.entry("DBSIZE", 1), Map.entry("KEYS", 2), Map.entry("CONFIG", -2), Map.entry("PING", -1),
      Map.entry("PUBLISH", 3), Map.entry("TIME", 1));
  /** What CONFIG GET maxmemory* answers on a default redis-server: no limit, so no eviction. */
  private static final Map<String, String> CONFIG = Map.of(
      "maxmemory", "0", "maxmemory-policy", "noeviction", "maxmemory-clients", "0",
      "maxmemory-samples", "5", "maxmemory-eviction-tenacity", "10");

  /** The wall clock keys expire by, in microseconds. */
  private final LongSupplier clock;
  /** What TIME reads, in microseconds. */
  private final LongSupplier time;
  /** Sorted, so KEYS answers in one order every run (Redis's own order is its hash table's). */
  private final TreeMap<String, Entry> data = new TreeMap<>();
  /** The time a running script sees, or -1 outside scripts. */
  private long frozenAt = -1;

  /** A keyspace on a clock in milliseconds. */
  public SimKeyspace(LongSupplier millis) {
    this(() -> millis.getAsLong() * 1000, () -> millis.getAsLong() * 1000);
  }

  /** A keyspace whose keys expire by {@code micros} and whose TIME reads {@code time}, both in microseconds. */
  public SimKeyspace(LongSupplier micros, LongSupplier time) {
    this.clock = micros;
    this.time = time;
  }

  /** The current time in milliseconds as commands see it: the clock, or the script's start while one runs. */
  public long now() {
    return frozenAt >= 0 ? frozenAt : clock.getAsLong() / 1000;
  }

  /** Runs {@code body} with time stopped at its start, as Redis does for a script. */
  public <T> T atomically(Supplier<T> body) {
    if (frozenAt >= 0) {
      return body.get();
    }
    frozenAt = clock.getAsLong() / 1000;
    try {
      return body.get();
    } finally {
      frozenAt = -1;
    }
  }

  /** Whether a script may call this command (it is one of ours). */
  static boolean knows(String name) {
    return ARITY.containsKey(name.toUpperCase(Locale.ROOT));
  }

  /** Whether {@code words} (name included) is a word count the command takes. */
  static boolean arityFits(String name, int words) {
    int arity = ARITY.get(name.toUpperCase(Locale.ROOT));
    return arity >= 0 ? words == arity : words >= -arity;
  }

  /**
   * Runs one command. The reply is a Long, a String (bulk), null (nil), a {@link SimStatus} or a
   * List of those; an error reply is thrown as a {@link SimError}.
   */
  public Object execute(List<String> argv) {
    if (argv.isEmpty()) {
      throw new SimError("ERR empty command");
    }
    String name = argv.get(0).toUpperCase(Locale.ROOT);
    if (!knows(name)) {
      StringBuilder args = new StringBuilder();
      for (String arg : argv.subList(1, argv.size())) {
        args.append('\'').append(arg).append("' ");
      }
      throw new SimError("ERR unknown command '" + argv.get(0) + "', with args beginning with: " + args);
    }
    if (!arityFits(name, argv.size())) {
      throw new SimError("ERR wrong number of arguments for '" + name.toLowerCase(Locale.ROOT) + "' command");
    }
    return switch (name) {
      case "GET" -> get(argv.get(1));
      case "SET" -> set(argv);
      case "DEL" -> del(argv.subList(1, argv.size()));
      case "EXISTS" -> exists(argv.subList(1, argv.size()));
      case "PEXPIRE" -> pexpire(argv);
      case "PTTL" -> pttl(argv.get(1));
      case "INCR" -> incr(argv.get(1));
      case "FLUSHALL" -> flushAll(argv);
      // Live keys only: Redis also counts expired keys its sweep has not reached yet.
      case "DBSIZE" -> (long) liveKeys("*").size();
      case "KEYS" -> new ArrayList<Object>(liveKeys(argv.get(1)));
      case "CONFIG" -> config(argv);
      case "PING" -> argv.size() == 1 ? SimStatus.PONG : argv.get(1);
      // The simulation has no subscribers: a notice reaches no one, as on a node nobody listens to.
      case "PUBLISH" -> 0L;
      // Live, as Redis 7.0's TIME is, also inside a script (gettimeofday, not the script's frozen time).
      case "TIME" -> time(time.getAsLong());
      default -> throw new IllegalStateException(name);
    };
  }

  /**
   * TIME's reply for one reading of the clock. Seconds and microseconds from two readings could
   * straddle a second: on a wall clock that answered 803 s and 0 us for 803.999 s (the
   * differential test saw it as a reply a second early).
   */
  private static List<Object> time(long micros) {
    return List.of(Long.toString(micros / 1_000_000), Long.toString(micros % 1_000_000));
  }

  /** Convenience for tests and the model: {@code execute(List.of(argv))}. */
  public Object execute(String... argv) {
    return execute(List.of(argv));
  }

  /** The live keys, sorted; for comparing states. */
  public List<String> keys() {
    return liveKeys("*");
  }

  /** Drops everything (a restart without persistence, or FLUSHALL). */
  public void clear() {
    data.clear();
  }

  // ---- lookups -------------------------------------------------------------------------------

  /** The key's entry, or null when absent; an expired key is deleted on the way, as in Redis. */
  private Entry live(String key) {
    Entry e = data.get(key);
    // Redis: a key is expired when now > when, so at its exact expiry time it still answers (PTTL 0).
    if (e != null && e.expireAt != PERSISTENT && now() > e.expireAt) {
      data.remove(key);
      return null;
    }
    return e;
  }

  private List<String> liveKeys(String pattern) {
    List<String> keys = new ArrayList<>();
    for (Iterator<Map.Entry<String, Entry>> it = data.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Entry> e = it.next();
      if (e.getValue().expireAt != PERSISTENT && now() > e.getValue().expireAt) {
        it.remove();
      } else if (Glob.matches(pattern, e.getKey())) {
        keys.add(e.getKey());
      }
    }
    return keys;
  }

  // ---- commands ------------------------------------------------------------------------------

  private Object get(String key) {
    Entry e = live(key);
    return e == null ? null : e.value;
  }

  /** SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL], parsed as Redis 7.0 does. */
  private Object set(List<String> argv) {
    boolean nx = false;
    boolean xx = false;
    boolean returnOld = false;
    boolean keepTtl = false;
    String unit = null;
    String amount = null;
    for (int j = 3; j < argv.size(); j++) {
      String opt = argv.get(j).toUpperCase(Locale.ROOT);
      boolean hasNext = j + 1 < argv.size();
      if (opt.equals("NX") && !xx) {
        nx = true;
      } else if (opt.equals("XX") && !nx) {
        xx = true;
      } else if (opt.equals("GET")) {
        returnOld = true;
      } else if (opt.equals("KEEPTTL") && unit == null) {
        keepTtl = true;
      } else if ((opt.equals("EX") || opt.equals("PX") || opt.equals("EXAT") || opt.equals("PXAT"))
          && !keepTtl && unit == null && hasNext) {
        unit = opt;
        amount = argv.get(++j);
      } else {
        throw new SimError("ERR syntax error");
      }
    }
    long expireAt = PERSISTENT;
    if (unit != null) {
      long n = integer(amount);
      boolean seconds = unit.startsWith("EX");
      if (n <= 0 || (seconds && n > Long.MAX_VALUE / 1000)) {
        throw invalidExpire("set");
      }
      long ms = seconds ? n * 1000 : n;
      if (unit.length() == 2) { // EX/PX are relative to now
        if (ms > Long.MAX_VALUE - now()) {
          throw invalidExpire("set");
        }
        ms += now();
      }
      expireAt = ms;
    }
    String key = argv.get(1);
    Entry old = live(key);
    if ((nx && old != null) || (xx && old == null)) {
      return returnOld ? valueOf(old) : null;
    }
    long keep = keepTtl && old != null ? old.expireAt : expireAt;
    data.put(key, new Entry(argv.get(2), keep));
    if (keep != PERSISTENT && now() > keep) {
      data.remove(key); // PXAT in the past: set and gone, as Redis does it
    }
    return returnOld ? valueOf(old) : SimStatus.OK;
  }

  private static String valueOf(Entry e) {
    return e == null ? null : e.value;
  }

  private long del(List<String> keys) {
    long n = 0;
    for (String key : keys) {
      if (live(key) != null) {
        data.remove(key);
        n++;
      }
    }
    return n;
  }

  /** Counts every argument, so a key named twice counts twice, as in Redis. */
  private long exists(List<String> keys) {
    long n = 0;
    for (String key : keys) {
      if (live(key) != null) {
        n++;
      }
    }
    return n;
  }

  /** PEXPIRE key ms [NX|XX|GT|LT]: 1 when the timeout was set (or the key deleted), else 0. */
  private long pexpire(List<String> argv) {
    boolean nx = false;
    boolean xx = false;
    boolean gt = false;
    boolean lt = false;
    for (String raw : argv.subList(3, argv.size())) {
      switch (raw.toUpperCase(Locale.ROOT)) {
        case "NX" -> nx = true;
        case "XX" -> xx = true;
        case "GT" -> gt = true;
        case "LT" -> lt = true;
        default -> throw new SimError("ERR Unsupported option " + raw);
      }
    }
    if (nx && (xx || gt || lt)) {
      throw new SimError("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if (gt && lt) {
      throw new SimError("ERR GT and LT options at the same time are not compatible");
    }
    long when = integer(argv.get(2));
    if (when > Long.MAX_VALUE - now()) {
      throw invalidExpire("pexpire");
    }
    when += now();
    String key = argv.get(1);
    Entry e = live(key);
    if (e == null) {
      return 0;
    }
    boolean persistent = e.expireAt == PERSISTENT;
    // A key without a ttl counts as expiring never: GT cannot beat it, LT always can.
    if ((nx && !persistent) || (xx && persistent) || (gt && (persistent || when <= e.expireAt))
        || (lt && !persistent && when >= e.expireAt)) {
      return 0;
    }
    if (when <= now()) {
      data.remove(key); // a timeout in the past deletes the key, and still answers 1
    } else {
      data.put(key, new Entry(e.value, when));
    }
    return 1;
  }

  private long pttl(String key) {
    Entry e = live(key);
    if (e == null) {
      return -2;
    }
    return e.expireAt == PERSISTENT ? -1 : Math.max(0, e.expireAt - now());
  }

  /** INCR keeps the key's ttl, as Redis does. */
  private long incr(String key) {
    Entry e = live(key);
    long value = e == null ? 0 : integer(e.value);
    if (value == Long.MAX_VALUE) {
      throw new SimError("ERR increment or decrement would overflow");
    }
    value++;
    data.put(key, new Entry(Long.toString(value), e == null ? PERSISTENT : e.expireAt));
    return value;
  }

  private SimStatus flushAll(List<String> argv) {
    if (argv.size() > 2 || (argv.size() == 2 && !argv.get(1).equalsIgnoreCase("ASYNC")
        && !argv.get(1).equalsIgnoreCase("SYNC"))) {
      throw new SimError("ERR syntax error");
    }
    data.clear();
    return SimStatus.OK;
  }

  /** CONFIG GET pattern...: the fixed answers of {@link #CONFIG}, as a flat name/value list. */
  private List<Object> config(List<String> argv) {
    String sub = argv.get(1).toUpperCase(Locale.ROOT);
    if (!sub.equals("GET")) {
      throw new SimError("ERR unknown subcommand '" + argv.get(1) + "'. Try CONFIG HELP.");
    }
    if (argv.size() < 3) {
      throw new SimError("ERR wrong number of arguments for 'config|get' command");
    }
    List<Object> flat = new ArrayList<>();
    for (Map.Entry<String, String> e : new TreeMap<>(CONFIG).entrySet()) {
      for (String pattern : argv.subList(2, argv.size())) {
        if (Glob.matches(pattern.toLowerCase(Locale.ROOT), e.getKey())) {
          flat.add(e.getKey());
          flat.add(e.getValue());
          break;
        }
      }
    }
    return flat;
  }

  // ---- parsing -------------------------------------------------------------------------------

  /**
   * A 64-bit integer written exactly as Redis's string2ll accepts it: no sign but '-', no
   * leading zeros, no spaces, no "-0".
   */
  static long integer(String text) {
    int n = text.length();
    boolean shape = n > 0 && n <= 20 && (text.equals("0")
        || text.matches("-?[1-9][0-9]*"));
    if (shape) {
      try {
        return Long.parseLong(text);
      } catch (NumberFormatException overflow) {
        // out of range, answered below
      }
    }
    throw new SimError("ERR value is not an integer or out of range");
  }

  private static SimError invalidExpire(String command) {
    return new SimError("ERR invalid expire time in '" + command + "' command");
  }

  /** Redis's glob (KEYS, CONFIG GET): *, ?, [abc], [^a-z], and \ to escape. */
  static final class Glob {
    private Glob() {}

    static boolean matches(String pattern, String text) {
      return match(pattern, 0, text, 0);
    }

    private static boolean match(String p, int pi, String s, int si) {
      while (pi < p.length()) {
        char c = p.charAt(pi);
        switch (c) {
          case '*' -> {
            for (int k = si; k <= s.length(); k++) {
              if (match(p, pi + 1, s, k)) {
                return true;
              }
            }
            return false;
          }
          case '?' -> {
            if (si >= s.length()) {
              return false;
            }
            pi++;
            si++;
          }
          case '[' -> {
            if (si >= s.length()) {
              return false;
            }
            int close = p.indexOf(']', pi + 2);
            if (close < 0) {
              close = p.length();
            }
            String set = p.substring(pi + 1, Math.min(close, p.length()));
            boolean negate = set.startsWith("^");
            if (negate) {
              set = set.substring(1);
            }
            if (inSet(set, s.charAt(si)) == negate) {
              return false;
            }
            pi = close + 1;
            si++;
          }
          default -> {
            if (c == '\\' && pi + 1 < p.length()) {
              pi++;
              c = p.charAt(pi);
            }
            if (si >= s.length() || s.charAt(si) != c) {
              return false;
            }
            pi++;
            si++;
          }
        }
      }
      return si == s.length();
    }

    private static boolean inSet(String set, char c) {
      for (int i = 0; i < set.length(); i++) {
        if (i + 2 < set.length() && set.charAt(i + 1) == '-') {
          char lo = (char) Math.min(set.charAt(i), set.charAt(i + 2));
          char hi = (char) Math.max(set.charAt(i), set.charAt(i + 2));
          if (c >= lo && c <= hi) {
            return true;
          }
          i += 2;
        } else if (set.charAt(i) == c) {
          return true;
        }
      }
      return false;
    }
  }
}
