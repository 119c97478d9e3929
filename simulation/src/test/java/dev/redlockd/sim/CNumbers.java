package dev.redlockd.sim;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * How the C code around Redis's Lua 5.1 turns numbers (C doubles) into text and integers,
 * where Java's and LuaJ's own conversions differ: {@code %.14g} (Lua's tostring),
 * {@code %.17g} (a number passed to redis.call) and the x86-64 double to long cast (a number
 * returned as an integer reply, string.format's {@code %d}).
 */
final class CNumbers {
  private CNumbers() {}

  /**
   * {@code (long long) d} on x86-64: truncation toward zero, and for NaN or anything out of range
   * the "integer indefinite" value Long.MIN_VALUE (Java's cast would saturate instead). Redis
   * answers {@code return 2^63} and {@code return 0/0} with -9223372036854775808.
   */
  static long toLong(double d) {
    if (Double.isNaN(d) || d >= 0x1p63 || d < -0x1p63) {
      return Long.MIN_VALUE;
    }
    return (long) d;
  }

  /** C's {@code %.<precision>g}, with glibc's spelling of the special values. */
  static String formatG(double v, int precision) {
    return formatG(v, precision, false, false);
  }

  /**
   * C's {@code %g}: the shorter of %e and %f at {@code precision} significant digits, trailing
   * zeros dropped unless {@code alternate} ('#' flag). BigDecimal of a double is exact, so
   * rounding it half-even is what glibc's printf does with the same binary value.
   */
  static String formatG(double v, int precision, boolean alternate, boolean upper) {
    String text;
    if (Double.isNaN(v)) {
      text = (Double.doubleToRawLongBits(v) < 0 ? "-" : "") + "nan";
    } else if (Double.isInfinite(v)) {
      text = v < 0 ? "-inf" : "inf";
    } else {
      int p = precision == 0 ? 1 : precision;
      String sign = (v < 0 || (v == 0 && 1 / v < 0)) ? "-" : "";
      BigDecimal exact = new BigDecimal(v).abs();
      if (exact.signum() == 0) {
        text = sign + (alternate ? "0." + "0".repeat(p - 1) : "0");
      } else {
        BigDecimal rounded = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
        int x = rounded.precision() - rounded.scale() - 1; // the exponent %e would print
        String digits = rounded.unscaledValue().toString();
        digits = (digits + "0".repeat(Math.max(0, p - digits.length()))).substring(0, p);
        if (x < -4 || x >= p) {
          String fraction = alternate ? digits.substring(1) : stripZeros(digits.substring(1));
          text = sign + digits.charAt(0) + (fraction.isEmpty() && !alternate ? "" : "." + fraction)
              + "e" + (x < 0 ? "-" : "+") + (Math.abs(x) < 10 ? "0" : "") + Math.abs(x);
        } else {
          String plain = rounded.setScale(Math.max(0, p - 1 - x), RoundingMode.UNNECESSARY).toPlainString();
          if (!alternate && plain.contains(".")) {
            plain = stripZeros(plain);
            if (plain.endsWith(".")) {
              plain = plain.substring(0, plain.length() - 1);
            }
          }
          text = sign + plain;
        }
      }
    }
    return upper ? text.toUpperCase(java.util.Locale.ROOT) : text;
  }

  /** C's {@code %.<precision>f}: the exact binary value rounded half-even, as glibc does. */
  static String formatF(double v, int precision) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return formatG(v, 1);
    }
    String sign = (v < 0 || (v == 0 && 1 / v < 0)) ? "-" : "";
    return sign + new BigDecimal(v).abs().setScale(precision, RoundingMode.HALF_EVEN).toPlainString();
  }

  /** C's {@code %.<precision>e}: d.ddde+XX, the exponent at least two digits. */
  static String formatE(double v, int precision, boolean upper) {
    String text;
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      text = formatG(v, 1);
    } else {
      String sign = (v < 0 || (v == 0 && 1 / v < 0)) ? "-" : "";
      BigDecimal exact = new BigDecimal(v).abs();
      String digits;
      int x;
      if (exact.signum() == 0) {
        digits = "0".repeat(precision + 1);
        x = 0;
      } else {
        BigDecimal rounded = exact.round(new MathContext(precision + 1, RoundingMode.HALF_EVEN));
        x = rounded.precision() - rounded.scale() - 1;
        digits = rounded.unscaledValue().toString();
        digits = (digits + "0".repeat(Math.max(0, precision + 1 - digits.length()))).substring(0, precision + 1);
      }
      text = sign + digits.charAt(0) + (precision > 0 ? "." + digits.substring(1) : "")
          + "e" + (x < 0 ? "-" : "+") + (Math.abs(x) < 10 ? "0" : "") + Math.abs(x);
    }
    return upper ? text.toUpperCase(java.util.Locale.ROOT) : text;
  }

  private static String stripZeros(String s) {
    int end = s.length();
    while (end > 0 && s.charAt(end - 1) == '0') {
      end--;
    }
    return s.substring(0, end);
  }
}
