package dev.redlockd.sim;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LoadState;
import org.luaj.vm2.LuaClosure;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaString;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Prototype;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.compiler.LuaC;
import org.luaj.vm2.lib.BaseLib;
import org.luaj.vm2.lib.OneArgFunction;
import org.luaj.vm2.lib.PackageLib;
import org.luaj.vm2.lib.StringLib;
import org.luaj.vm2.lib.TableLib;
import org.luaj.vm2.lib.ThreeArgFunction;
import org.luaj.vm2.lib.TwoArgFunction;
import org.luaj.vm2.lib.VarArgFunction;
import org.luaj.vm2.lib.jse.JseMathLib;

/**
 * Runs Redis scripts on LuaJ against a {@link SimKeyspace}, the way Redis 7.0 runs them:
 * KEYS and ARGV as globals, a {@code redis} table, read-only globals, replies converted both
 * ways by Redis's rules, time frozen for the script's length.
 *
 * <p>LuaJ implements Lua 5.2 and Redis embeds 5.1; where the two (or LuaJ and C) differ in
 * something a script can see, this class puts Redis's behaviour back:
 * <ul>
 *   <li>string.format's {@code %d}/{@code %i}: LuaJ 3.0.1 casts to a 32-bit int
 *       (1795519959339002 came out as 291311610); here it is the 64-bit C cast.
 *   <li>tostring of a number: LuaJ prints its own way ({@code 1/3} as 0.33333334, 1e100 as
 *       Infinity, 1e15 as 1000000000000000); Lua 5.1 prints {@code %.14g}.
 *   <li>tonumber of a string: Lua 5.1 uses C's strtod, so it also takes "inf", "nan" and hex
 *       fractions ("0x1p4"); LuaJ does not.
 *   <li>math.random: Redis's lrand48, not LuaJ's unseeded java.util.Random.
 *   <li>a number passed to redis.call is written {@code %.17g} (Redis's own conversion).
 *   <li>a number returned as an integer reply: the x86-64 cast (NaN and out of range give
 *       Long.MIN_VALUE, where Java would saturate).
 *   <li>globals: reading an undefined one and writing any is an error, as in Redis 7.
 *   <li>pcall: Redis 7's own, which hands a caught error table's {@code err} text to the
 *       script.
 *   <li>5.1's {@code unpack} (5.2 moved it to table.unpack).
 * </ul>
 * Not put back (a script that depends on these would behave differently here): number to
 * string coercion by {@code ..} and by string functions (LuaJ's spelling, not %.14g);
 * arithmetic on numeric strings (LuaJ's parser); tonumber with a base; -0.0 (LuaJ stores
 * integral numbers as ints, so the sign is lost); integer arithmetic past 2^53 (LuaJ may stay
 * exact where a C double rounds); 5.2 features 5.1 lacks ({@code rawlen}, {@code goto}) still
 * working; 5.1 names LuaJ lacks ({@code loadstring}, {@code math.mod}, {@code table.getn},
 * {@code gcinfo}); {@code rawset} past the read-only globals; the coroutine library (LuaJ's
 * runs on Java threads) and the cjson, cmsgpack, struct and bit libraries (all absent); script
 * timeouts (a looping script hangs the model).
 *
 * <p>One instance per node: its globals are the node's Lua interpreter. Not thread-safe.
 */
final class SimLua {
  /** Compiled chunks by source; a Prototype holds no state, so nodes share them. */
  private static final Map<String, Prototype> COMPILED = new ConcurrentHashMap<>();
  /** LuaJ's error position: "@user_script:12 message" (runtime) or "user_script:12: message" (compile). */
  private static final Pattern POSITION = Pattern.compile("^@?user_script:(\\d+):? (.*)$", Pattern.DOTALL);
  private static final Globals COMPILER = compilerGlobals();

  private final SimKeyspace keyspace;
  private final Globals globals;
  /** What scripts see as their globals: a read-only view of {@link #globals}. */
  private final LuaTable env;
  private final Lrand48 random = new Lrand48();

  SimLua(SimKeyspace keyspace) {
    this.keyspace = keyspace;
    this.globals = new Globals();
    globals.load(new BaseLib());
    globals.load(new PackageLib()); // LuaJ's libraries register themselves in package.loaded
    globals.load(new TableLib());
    globals.load(new StringLib());
    globals.load(new JseMathLib());
    LoadState.install(globals);
    LuaC.install(globals);
    // Redis offers none of these (no file or module access from a script).
    for (String name : List.of("dofile", "loadfile", "print", "require", "package", "module")) {
      globals.rawset(name, LuaValue.NIL);
    }
    globals.rawset("unpack", globals.get("table").get("unpack"));
    globals.rawset("pcall", redisPcall(globals.get("pcall")));
    installNumberFunctions();
    globals.rawset("redis", redisTable());
    env = readOnlyView(globals);
    globals.rawset("_G", env);
  }

  /**
   * Runs {@code source} (named {@code sha} in error replies). The reply is a Long, String, null,
   * {@link SimStatus}, or List of those (a List may hold a {@link SimError}); an error reply is
   * thrown as a SimError.
   */
  Object run(String source, String sha, List<String> keys, List<String> args) {
    Prototype chunk;
    try {
      chunk = COMPILED.computeIfAbsent(source, SimLua::compile);
    } catch (LuaError e) {
      throw new SimError("ERR Error compiling script (new function): " + redisPosition(e.getMessage()));
    }
    globals.rawset("KEYS", stringTable(keys));
    globals.rawset("ARGV", stringTable(args));
    Object reply = keyspace.atomically(() -> {
      try {
        return toReply(new LuaClosure(chunk, env).call());
      } catch (LuaError e) {
        return scriptError(e, sha);
      } catch (StackOverflowError e) {
        return new SimError("ERR user_script: stack overflow script: " + sha);
      }
    });
    if (reply instanceof SimError error) {
      throw error;
    }
    return reply;
  }

  // ---- the redis table -----------------------------------------------------------------------

  private LuaTable redisTable() {
    LuaTable redis = new LuaTable();
    redis.rawset("call", new VarArgFunction() {
      @Override
      public Varargs invoke(Varargs args) {
        return command(args, true);
      }
    });
    redis.rawset("pcall", new VarArgFunction() {
      @Override
      public Varargs invoke(Varargs args) {
        return command(args, false);
      }
    });
    redis.rawset("sha1hex", new OneArgFunction() {
      @Override
      public LuaValue call(LuaValue text) {
        return LuaValue.valueOf(sha1Hex(bytes(text.type() == LuaValue.TNUMBER ? LuaValue.valueOf(luaToString(text)) : text.checkstring())));
      }
    });
    redis.rawset("error_reply", new OneArgFunction() {
      @Override
      public LuaValue call(LuaValue text) {
        // Redis 7 writes the '-' itself when missing and keeps the text whole.
        String message = text.checkjstring();
        return errorTable(message.startsWith("-") ? message.substring(1) : message);
      }
    });
    redis.rawset("status_reply", new OneArgFunction() {
      @Override
      public LuaValue call(LuaValue text) {
        LuaTable status = new LuaTable();
        status.rawset("ok", text.checkstring());
        return status;
      }
    });
    redis.rawset("log", new VarArgFunction() {
      @Override
      public Varargs invoke(Varargs args) {
        return LuaValue.NONE; // the server log is not modelled
      }
    });
    redis.rawset("replicate_commands", LuaValue.TRUE); // always on in Redis 7
    String[] levels = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"};
    for (int i = 0; i < levels.length; i++) {
      redis.rawset(levels[i], i);
    }
    return redis;
  }

  /** redis.call (raise) and redis.pcall (return {err=...}) with Redis 7.0's checks and wording. */
  private Varargs command(Varargs args, boolean raise) {
    SimError failure = null;
    Object reply = null;
    List<String> argv = new ArrayList<>(args.narg());
    if (args.narg() == 0) {
      failure = new SimError("ERR Please specify at least one argument for this redis lib call");
    }
    for (int i = 1; i <= args.narg() && failure == null; i++) {
      LuaValue arg = args.arg(i);
      if (arg.type() == LuaValue.TNUMBER) {
        argv.add(CNumbers.formatG(arg.todouble(), 17)); // Redis's own conversion, not Lua's %.14g
      } else if (arg.type() == LuaValue.TSTRING) {
        argv.add(arg.tojstring());
      } else {
        failure = new SimError("ERR Lua redis lib command arguments must be strings or integers");
      }
    }
    if (failure == null) {
      String name = argv.get(0).toUpperCase(Locale.ROOT);
      if (name.equals("EVAL") || name.equals("EVALSHA") || name.equals("SCRIPT") || name.equals("CONFIG")) {
        failure = new SimError("ERR This Redis command is not allowed from script");
      } else if (!SimKeyspace.knows(name)) {
        failure = new SimError("ERR Unknown Redis command called from script");
      } else if (!SimKeyspace.arityFits(name, argv.size())) {
        failure = new SimError("ERR Wrong number of args calling Redis command from script");
      } else {
        try {
          reply = keyspace.execute(argv);
        } catch (SimError e) {
          failure = e;
        }
      }
    }
    if (failure != null) {
      LuaTable error = errorTable(failure.getMessage());
      if (raise) {
        throw new LuaError(error);
      }
      return error;
    }
    return toLua(reply);
  }

  private static LuaTable errorTable(String message) {
    LuaTable error = new LuaTable();
    error.rawset("err", message);
    return error;
  }

  // ---- conversions ---------------------------------------------------------------------------

  /**
   * Redis reply to Lua: integer to number (a C double, so exact to 2^53), bulk to string, nil to
   * false, array to table, status to {ok=...}, error to {err=...}.
   */
  private static LuaValue toLua(Object reply) {
    if (reply == null) {
      return LuaValue.FALSE;
    }
    if (reply instanceof Long n) {
      return LuaValue.valueOf((double) n);
    }
    if (reply instanceof String s) {
      return LuaValue.valueOf(s);
    }
    if (reply instanceof SimStatus status) {
      LuaTable table = new LuaTable();
      table.rawset("ok", status.text());
      return table;
    }
    if (reply instanceof SimError error) {
      return errorTable(error.getMessage());
    }
    if (reply instanceof List<?> list) {
      LuaTable table = new LuaTable();
      for (int i = 0; i < list.size(); i++) {
        table.rawset(i + 1, toLua(list.get(i)));
      }
      return table;
    }
    throw new IllegalStateException("no Lua form for " + reply);
  }

  /**
   * Lua to Redis reply: number to integer (truncated), string to bulk, true to 1, false and nil
   * to nil, a table with a string {@code err} to an error, with a string {@code ok} to a
   * status, with a number {@code double} to its %.17g text (RESP2), else to an array of its
   * elements 1, 2, ... up to the first nil. Anything else (functions) is nil.
   */
  private static Object toReply(LuaValue value) {
    switch (value.type()) {
      case LuaValue.TNUMBER:
        return CNumbers.toLong(value.todouble());
      case LuaValue.TSTRING:
        return value.tojstring();
      case LuaValue.TBOOLEAN:
        return value.toboolean() ? 1L : null;
      case LuaValue.TTABLE: {
        LuaValue err = value.rawget("err");
        if (err.type() == LuaValue.TSTRING) {
          return new SimError(err.tojstring());
        }
        LuaValue ok = value.rawget("ok");
        if (ok.type() == LuaValue.TSTRING) {
          return new SimStatus(ok.tojstring());
        }
        LuaValue dbl = value.rawget("double");
        if (dbl.type() == LuaValue.TNUMBER) {
          return CNumbers.formatG(dbl.todouble(), 17);
        }
        List<Object> items = new ArrayList<>();
        for (int i = 1; !value.rawget(i).isnil(); i++) {
          items.add(toReply(value.rawget(i)));
        }
        return items;
      }
      default:
        return null;
    }
  }

  /**
   * A script that raised an error. An error table (from redis.call, or error({err=...})) keeps
   * its own text; any other error is an ERR with Lua's message. Redis 7 then names the script
   * and the line: "... script: <sha>, on @user_script:<line>."
   */
  private static SimError scriptError(LuaError e, String sha) {
    LuaValue object = e.getMessageObject();
    Matcher position = POSITION.matcher(e.getMessage() == null ? "" : e.getMessage());
    String where = position.matches() ? ", on @user_script:" + position.group(1) + "." : "";
    String message;
    if (object != null && object.istable() && object.rawget("err").type() == LuaValue.TSTRING) {
      message = object.rawget("err").tojstring();
    } else {
      message = "ERR " + redisPosition(e.getMessage());
    }
    return new SimError(message + " script: " + sha + where);
  }

  /** LuaJ's "@user_script:3 text" as Lua 5.1 writes it: "user_script:3: text". */
  private static String redisPosition(String message) {
    if (message == null) {
      return "error";
    }
    Matcher m = POSITION.matcher(message);
    return m.matches() ? "user_script:" + m.group(1) + ": " + m.group(2) : message;
  }

  private static LuaTable stringTable(List<String> values) {
    LuaTable table = new LuaTable(values.size(), 0);
    for (int i = 0; i < values.size(); i++) {
      table.rawset(i + 1, LuaValue.valueOf(values.get(i)));
    }
    return table;
  }

  // ---- Lua 5.1 behaviours put back -----------------------------------------------------------

  private void installNumberFunctions() {
    LuaValue luajTostring = globals.get("tostring");
    globals.rawset("tostring", new OneArgFunction() {
      @Override
      public LuaValue call(LuaValue value) {
        return value.type() == LuaValue.TNUMBER ? LuaValue.valueOf(luaToString(value)) : luajTostring.call(value);
      }
    });
    LuaValue luajTonumber = globals.get("tonumber");
    globals.rawset("tonumber", new VarArgFunction() {
      @Override
      public Varargs invoke(Varargs args) {
        LuaValue value = args.arg1();
        boolean base10 = args.isnoneornil(2) || args.arg(2).todouble() == 10;
        if (base10 && value.type() == LuaValue.TSTRING) {
          Double parsed = strtod(value.tojstring());
          return parsed == null ? LuaValue.NIL : LuaValue.valueOf(parsed);
        }
        return luajTonumber.invoke(args);
      }
    });
    LuaTable string = (LuaTable) globals.get("string");
    string.rawset("format", new LuaFormat(string.get("format")));
    LuaTable math = (LuaTable) globals.get("math");
    math.rawset("random", new VarArgFunction() {
      @Override
      public Varargs invoke(Varargs args) {
        double r = random.nextUnit();
        switch (args.narg()) {
          case 0:
            return LuaValue.valueOf(r);
          case 1: {
            int upper = (int) args.checkdouble(1);
            if (upper < 1) {
              argerror(1, "interval is empty");
            }
            return LuaValue.valueOf(Math.floor(r * upper) + 1);
          }
          case 2: {
            int lower = (int) args.checkdouble(1);
            int upper = (int) args.checkdouble(2);
            if (lower > upper) {
              argerror(2, "interval is empty");
            }
            return LuaValue.valueOf(Math.floor(r * ((double) upper - lower + 1)) + lower);
          }
          default:
            throw new LuaError("wrong number of arguments");
        }
      }
    });
    math.rawset("randomseed", new OneArgFunction() {
      @Override
      public LuaValue call(LuaValue seed) {
        random.seed((int) seed.checkdouble());
        return LuaValue.NIL;
      }
    });
  }

  /**
   * Redis 7 replaces Lua's pcall: when the error caught is a table with an {@code err} field
   * (what redis.call raises), the script gets that text, not the table.
   */
  private static LuaValue redisPcall(LuaValue luajPcall) {
    return new VarArgFunction() {
      @Override
      public Varargs invoke(Varargs args) {
        Varargs result = luajPcall.invoke(args);
        LuaValue error = result.arg(2);
        if (!result.arg1().toboolean() && error.istable() && error.rawget("err").isstring()) {
          return LuaValue.varargsOf(LuaValue.FALSE, error.rawget("err"));
        }
        return result;
      }
    };
  }

  /** Lua 5.1's number to string: {@code %.14g}. */
  static String luaToString(LuaValue number) {
    return CNumbers.formatG(number.todouble(), 14);
  }

  private static final Pattern DECIMAL = Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");
  private static final Pattern HEX = Pattern.compile("([+-]?)0[xX]([0-9a-fA-F]+\\.?[0-9a-fA-F]*|\\.[0-9a-fA-F]+)([pP][+-]?\\d+)?");
  private static final Pattern SPECIAL = Pattern.compile("([+-]?)(inf|infinity|nan(\\([0-9a-zA-Z_]*\\))?)", Pattern.CASE_INSENSITIVE);

  /**
   * Lua 5.1's tonumber on a string: glibc strtod over the whole text, C whitespace around it
   * allowed. Double.parseDouble rounds correctly, as glibc does, but takes suffixes ("1d")
   * and spellings C does not, so the text is checked first.
   */
  static Double strtod(String text) {
    int start = 0;
    int end = text.length();
    while (start < end && isCSpace(text.charAt(start))) {
      start++;
    }
    while (end > start && isCSpace(text.charAt(end - 1))) {
      end--;
    }
    String s = text.substring(start, end);
    if (DECIMAL.matcher(s).matches()) {
      return Double.parseDouble(s);
    }
    Matcher hex = HEX.matcher(s);
    if (hex.matches()) {
      double v = Double.parseDouble(hex.group(1) + "0x" + hex.group(2) + (hex.group(3) == null ? "p0" : hex.group(3)));
      return v;
    }
    Matcher special = SPECIAL.matcher(s);
    if (special.matches()) {
      boolean negative = special.group(1).equals("-");
      if (special.group(2).toLowerCase(Locale.ROOT).startsWith("nan")) {
        return Double.NaN;
      }
      return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    return null;
  }

  private static boolean isCSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r';
  }

  // ---- plumbing ------------------------------------------------------------------------------

  /**
   * Redis 7's global protection: reading a global that does not exist is an error (a typo in a
   * script fails loudly) and so is writing any.
   */
  private static LuaTable readOnlyView(LuaTable globals) {
    LuaTable view = new LuaTable();
    LuaTable meta = new LuaTable();
    meta.rawset("__index", new TwoArgFunction() {
      @Override
      public LuaValue call(LuaValue self, LuaValue name) {
        LuaValue value = globals.rawget(name);
        if (value.isnil()) {
          throw new LuaError("Script attempted to access nonexistent global variable '" + name.tojstring() + "'");
        }
        return value;
      }
    });
    meta.rawset("__newindex", new ThreeArgFunction() {
      @Override
      public LuaValue call(LuaValue self, LuaValue name, LuaValue value) {
        throw new LuaError("Attempt to modify a readonly table");
      }
    });
    view.setmetatable(meta);
    return view;
  }

  private static Globals compilerGlobals() {
    Globals g = new Globals();
    LoadState.install(g);
    LuaC.install(g);
    return g;
  }

  private static Prototype compile(String source) {
    try {
      synchronized (COMPILER) {
        return COMPILER.compilePrototype(new StringReader(source), "@user_script");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] bytes(LuaString s) {
    byte[] copy = new byte[s.rawlen()];
    s.copyInto(0, copy, 0, copy.length);
    return copy;
  }

  static String sha1Hex(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-1", e);
    }
  }

  static String sha1Hex(String text) {
    return sha1Hex(text.getBytes(StandardCharsets.UTF_8));
  }
}
