package dev.redlockd.sim;

import java.util.Locale;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.lib.VarArgFunction;

/**
 * string.format as Lua 5.1 does it on top of C's sprintf. LuaJ 3.0.1's own version casts
 * {@code %d} to a 32-bit int, which the acquire script's {@code string.format('%d', fence)}
 * cannot survive (fences reach ~1.8e15). Numbers are formatted from the exact double, as
 * glibc does; {@code %q} is left to LuaJ, whose quoting matches 5.1's.
 */
final class LuaFormat extends VarArgFunction {
  private static final String FLAGS = "-+ #0";
  private final LuaValue luajFormat;

  LuaFormat(LuaValue luajFormat) {
    this.luajFormat = luajFormat;
  }

  @Override
  public Varargs invoke(Varargs args) {
    String format = args.checkjstring(1);
    StringBuilder out = new StringBuilder();
    int arg = 1;
    for (int i = 0; i < format.length(); i++) {
      char c = format.charAt(i);
      if (c != '%') {
        out.append(c);
        continue;
      }
      if (++i >= format.length()) {
        throw new LuaError("invalid option '%' to 'format'");
      }
      if (format.charAt(i) == '%') {
        out.append('%');
        continue;
      }
      // %[flags][width][.precision]conversion, width and precision at most two digits each.
      int start = i;
      while (i < format.length() && FLAGS.indexOf(format.charAt(i)) >= 0) {
        i++;
      }
      if (i - start > FLAGS.length()) {
        throw new LuaError("invalid format (repeated flags)");
      }
      String flags = format.substring(start, i);
      int width = 0;
      int digits = 0;
      while (i < format.length() && Character.isDigit(format.charAt(i))) {
        width = width * 10 + (format.charAt(i++) - '0');
        digits++;
      }
      int precision = -1;
      if (i < format.length() && format.charAt(i) == '.') {
        i++;
        precision = 0;
        int pdigits = 0;
        while (i < format.length() && Character.isDigit(format.charAt(i))) {
          precision = precision * 10 + (format.charAt(i++) - '0');
          pdigits++;
        }
        digits = Math.max(digits, pdigits);
      }
      if (digits > 2 || i >= format.length()) {
        throw new LuaError("invalid format (width or precision too long)");
      }
      char conversion = format.charAt(i);
      arg++;
      if (arg > args.narg()) {
        argerror(arg, "no value");
      }
      LuaValue value = args.arg(arg);
      switch (conversion) {
        case 'd', 'i' -> out.append(integer(CNumbers.toLong(value.checkdouble()), flags, width, precision, conversion));
        case 'o', 'u', 'x', 'X' -> out.append(integer(CNumbers.toLong(value.checkdouble()), flags, width, precision, conversion));
        case 'c' -> out.append(pad(String.valueOf((char) ((int) value.checkdouble() & 0xFF)), "", flags.replace("0", ""), width));
        case 'e', 'E' -> out.append(floating(CNumbers.formatE(value.checkdouble(), precision < 0 ? 6 : precision, conversion == 'E'), flags, width));
        case 'f' -> out.append(floating(CNumbers.formatF(value.checkdouble(), precision < 0 ? 6 : precision), flags, width));
        case 'g', 'G' -> out.append(floating(CNumbers.formatG(value.checkdouble(), precision < 0 ? 6 : precision,
            flags.contains("#"), conversion == 'G'), flags, width));
        case 's' -> {
          String text = value.type() == LuaValue.TNUMBER ? SimLua.luaToString(value) : value.checkjstring();
          if (precision >= 0 && precision < text.length()) {
            text = text.substring(0, precision);
          }
          out.append(pad(text, "", flags.replace("0", ""), width));
        }
        case 'q' -> out.append(luajFormat.call(LuaValue.valueOf("%q"), value).tojstring());
        default -> throw new LuaError("invalid option '%" + conversion + "' to 'format'");
      }
    }
    return LuaValue.valueOf(out.toString());
  }

  /** %d %i (signed) and %o %u %x %X (the same 64 bits read unsigned), with C's flags. */
  private static String integer(long v, String flags, int width, int precision, char conversion) {
    String sign = "";
    String body;
    switch (conversion) {
      case 'd', 'i' -> {
        body = v < 0 ? Long.toUnsignedString(-v) : Long.toString(v);
        sign = v < 0 ? "-" : flags.contains("+") ? "+" : flags.contains(" ") ? " " : "";
      }
      case 'o' -> body = Long.toOctalString(v);
      case 'u' -> body = Long.toUnsignedString(v);
      case 'x' -> body = Long.toHexString(v);
      default -> body = Long.toHexString(v).toUpperCase(Locale.ROOT);
    }
    if (precision == 0 && v == 0) {
      body = "";
    }
    if (precision > body.length()) {
      body = "0".repeat(precision - body.length()) + body;
    }
    String prefix = "";
    if (flags.contains("#") && v != 0) {
      prefix = conversion == 'x' ? "0x" : conversion == 'X' ? "0X" : "";
      if (conversion == 'o' && !body.startsWith("0")) {
        body = "0" + body;
      }
    }
    // '0' pads with zeros after the sign, unless '-' or a precision says otherwise.
    String padFlags = precision >= 0 ? flags.replace("0", "") : flags;
    return pad(body, sign + prefix, padFlags, width);
  }

  private static String floating(String text, String flags, int width) {
    String sign = "";
    if (text.startsWith("-")) {
      sign = "-";
      text = text.substring(1);
    } else if (flags.contains("+")) {
      sign = "+";
    } else if (flags.contains(" ")) {
      sign = " ";
    }
    boolean finite = !text.startsWith("inf") && !text.startsWith("nan") && !text.startsWith("INF") && !text.startsWith("NAN");
    return pad(text, sign, finite ? flags : flags.replace("0", ""), width);
  }

  private static String pad(String body, String sign, String flags, int width) {
    int fill = width - body.length() - sign.length();
    if (fill <= 0) {
      return sign + body;
    }
    if (flags.contains("-")) {
      return sign + body + " ".repeat(fill);
    }
    if (flags.contains("0")) {
      return sign + "0".repeat(fill) + body;
    }
    return " ".repeat(fill) + sign + body;
  }
}
