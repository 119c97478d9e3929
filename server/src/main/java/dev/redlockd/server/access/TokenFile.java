package dev.redlockd.server.access;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Bearer tokens known by their SHA-256 hashes only, one line each: {@code <identity> sha256:<64 hex>}
 * ({@code #} starts a comment line). The file never holds a token, so reading it gives none away;
 * a presented token is hashed and compared with every line in constant time, so the time taken
 * says nothing about how close a guess came. No method returns or prints a token or a hash.
 */
public final class TokenFile {
  private static final Pattern LINE = Pattern.compile("(\\S+)\\s+sha256:([0-9a-fA-F]{64})");

  private record Entry(String identity, byte[] hash) {}

  private final List<Entry> entries;

  private TokenFile(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  /** Parses the whole file or none of it; a bad line is named by number, never echoed. */
  public static TokenFile parse(String text) throws PolicyException {
    List<Entry> entries = new ArrayList<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Matcher m = LINE.matcher(line);
      if (!m.matches()) {
        // The line is not echoed: a token pasted by mistake must not reach the log.
        throw new PolicyException("token file line " + (i + 1)
            + ": expected '<identity> sha256:<64 hex digits>'");
      }
      byte[] hash = HexFormat.of().parseHex(m.group(2).toLowerCase());
      for (Entry e : entries) {
        if (MessageDigest.isEqual(e.hash, hash)) {
          throw new PolicyException("token file line " + (i + 1) + ": the same token hash appears twice");
        }
      }
      entries.add(new Entry(m.group(1), hash));
    }
    return new TokenFile(entries);
  }

  /** The identity a presented token belongs to, if any. */
  public Optional<String> identityFor(String token) {
    return identityForHash(sha256(token));
  }

  /** The identity a token with this SHA-256 hash belongs to, if any: how a call's token is found again later. */
  Optional<String> identityForHash(byte[] hash) {
    String found = null;
    for (Entry e : entries) { // every entry compared, found or not: same time either way
      if (MessageDigest.isEqual(e.hash, hash)) {
        found = e.identity;
      }
    }
    return Optional.ofNullable(found);
  }

  public int size() {
    return entries.size();
  }

  @Override
  public String toString() {
    return "TokenFile[" + entries.size() + " tokens]";
  }

  static byte[] sha256(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
