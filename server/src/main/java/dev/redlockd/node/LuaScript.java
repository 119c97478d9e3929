package dev.redlockd.node;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/** A Lua script shipped as a resource, with the SHA1 that EVALSHA names it by. */
public final class LuaScript {
  private final String name;
  private final String source;
  private final String sha1;

  private LuaScript(String name, String source) {
    this.name = name;
    this.source = source;
    this.sha1 = sha1Hex(source);
  }

  /** Loads {@code <name>.lua} from the resources of {@code owner}'s package. */
  public static LuaScript load(Class<?> owner, String name) {
    String resource = name + ".lua";
    try (InputStream in = owner.getResourceAsStream(resource)) {
      Objects.requireNonNull(in, () -> "missing Lua resource " + resource);
      return new LuaScript(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read Lua resource " + resource, e);
    }
  }

  /** A script given as source, as tests of the node client send them. */
  public static LuaScript of(String name, String source) {
    return new LuaScript(name, source);
  }

  public String name() {
    return name;
  }

  public String source() {
    return source;
  }

  public String sha1() {
    return sha1;
  }

  private static String sha1Hex(String text) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-1");
      return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-1", e);
    }
  }

  @Override
  public String toString() {
    return "LuaScript[" + name + ", sha1=" + sha1 + "]";
  }
}
