package dev.redlockd.server.access;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a policy file (JSON, described in docs/operating.md and policy.schema.json) into a
 * {@link Policy}, or refuses it whole: everything is checked before anything is built, so a caller
 * either gets a complete policy or a {@link PolicyException}, never part of one. Unknown keys are
 * errors, not ignored, because a misspelt grant silently ignored would deny (or, in limits, allow)
 * something the operator did not mean.
 *
 * <p>Two versions: in version 1 an entry's {@code lock} prefixes also cover Campaign and its
 * {@code describe} prefixes Leader and Observe (elections had no permissions of their own then);
 * version 2 adds {@code campaign} and {@code observe}, and its {@code lock} and {@code describe}
 * cover locks only. A version 1 file keeps its meaning.
 */
public final class PolicyParser {
  private static final Set<String> TOP_KEYS = Set.of("version", "default_limits", "identities", "sensitive_names");
  private static final Set<String> ENTRY_KEYS_V1 =
      Set.of("identity", "lock", "describe", "force_release", "limits");
  private static final Set<String> ENTRY_KEYS_V2 =
      Set.of("identity", "lock", "describe", "force_release", "campaign", "observe", "limits");
  private static final Set<String> LIMIT_KEYS =
      Set.of("held_leases", "keepalive_streams", "waiting_acquires", "election_streams");

  private PolicyParser() {}

  public static Policy parse(String json) throws PolicyException {
    try {
      JsonReader reader = new JsonReader(new StringReader(json));
      reader.setStrictness(Strictness.STRICT);
      JsonElement root = JsonParser.parseReader(reader);
      if (reader.peek() != com.google.gson.stream.JsonToken.END_DOCUMENT) {
        throw new PolicyException("policy: text after the JSON object");
      }
      return build(object(root, "policy"));
    } catch (JsonParseException | java.io.IOException | IllegalStateException e) {
      throw new PolicyException("policy: not valid JSON: " + firstLine(e.getMessage()), e);
    } catch (IllegalArgumentException e) {
      throw new PolicyException("policy: " + e.getMessage(), e);
    }
  }

  /** gson adds a second line pointing at its troubleshooting guide; a log line wants one. */
  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    int end = message.indexOf('\n');
    String line = end < 0 ? message : message.substring(0, end);
    // gson wraps some reader errors as "java.io.EOFException: End of input ...": the class name
    // tells an operator nothing the rest of the line does not.
    return line.replaceFirst("^(?:[a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_]*(?:Exception|Error): ", "");
  }

  private static Policy build(JsonObject root) throws PolicyException {
    onlyKeys(root, TOP_KEYS, "policy");
    JsonElement versionField = root.get("version");
    if (versionField == null || !versionField.isJsonPrimitive() || !versionField.getAsJsonPrimitive().isNumber()
        || !("1".equals(versionField.getAsString()) || "2".equals(versionField.getAsString()))) {
      throw new PolicyException("policy: \"version\" must be 1 or 2");
    }
    int version = Integer.parseInt(versionField.getAsString());
    Limits defaults = root.has("default_limits")
        ? limits(object(root.get("default_limits"), "default_limits"), Limits.DEFAULT, "default_limits")
        : Limits.DEFAULT;
    if (!root.has("identities") || !root.get("identities").isJsonArray()) {
      throw new PolicyException("policy: \"identities\" must be an array");
    }
    List<PolicyEntry> grants = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    JsonArray entries = root.getAsJsonArray("identities");
    for (int i = 0; i < entries.size(); i++) {
      String where = "identities[" + i + "]";
      PolicyEntry grant = grant(object(entries.get(i), where), version, defaults, where);
      if (!seen.add(grant.identity().text())) {
        throw new PolicyException(where + ": identity '" + grant.identity().text() + "' appears twice");
      }
      grants.add(grant);
    }
    List<String> sensitive = root.has("sensitive_names")
        ? strings(root.get("sensitive_names"), "sensitive_names") : List.of();
    return new Policy(grants, sensitive);
  }

  private static PolicyEntry grant(JsonObject entry, int version, Limits defaults, String where)
      throws PolicyException {
    onlyKeys(entry, version == 1 ? ENTRY_KEYS_V1 : ENTRY_KEYS_V2, where);
    IdentityPattern identity;
    try {
      identity = new IdentityPattern(string(entry.get("identity"), where + ".identity"));
    } catch (IllegalArgumentException e) {
      throw new PolicyException(where + ": " + e.getMessage());
    }
    Map<Permission, List<String>> prefixes = new EnumMap<>(Permission.class);
    for (Permission permission : Permission.values()) {
      if (entry.has(permission.key())) {
        prefixes.put(permission, strings(entry.get(permission.key()), where + "." + permission.key()));
      }
    }
    if (version == 1) {
      // What version 1's lock and describe prefixes always covered.
      prefixes.put(Permission.CAMPAIGN, prefixes.getOrDefault(Permission.LOCK, List.of()));
      prefixes.put(Permission.OBSERVE, prefixes.getOrDefault(Permission.DESCRIBE, List.of()));
    }
    Limits limits = entry.has("limits")
        ? limits(object(entry.get("limits"), where + ".limits"), defaults, where + ".limits")
        : defaults;
    return new PolicyEntry(identity, prefixes, limits);
  }

  /** Limits given in the object; those left out come from {@code base}. */
  private static Limits limits(JsonObject o, Limits base, String where) throws PolicyException {
    onlyKeys(o, LIMIT_KEYS, where);
    return new Limits(
        count(o, "held_leases", base.heldLeases(), where),
        count(o, "keepalive_streams", base.keepAliveStreams(), where),
        count(o, "waiting_acquires", base.waitingAcquires(), where),
        count(o, "election_streams", base.electionStreams(), where));
  }

  private static int count(JsonObject o, String key, int fallback, String where) throws PolicyException {
    if (!o.has(key)) {
      return fallback;
    }
    JsonElement e = o.get(key);
    if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber()) {
      String text = e.getAsString();
      if (text.matches("0|[1-9][0-9]{0,8}")) {
        return Integer.parseInt(text);
      }
    }
    throw new PolicyException(where + "." + key + ": must be a whole number from 0 to 999999999");
  }

  private static List<String> strings(JsonElement e, String where) throws PolicyException {
    if (e == null || !e.isJsonArray()) {
      throw new PolicyException(where + ": must be an array of resource prefixes");
    }
    List<String> out = new ArrayList<>();
    for (JsonElement item : e.getAsJsonArray()) {
      out.add(string(item, where + "[]"));
    }
    return out;
  }

  private static String string(JsonElement e, String where) throws PolicyException {
    if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
      throw new PolicyException(where + ": must be a string");
    }
    return e.getAsString();
  }

  private static JsonObject object(JsonElement e, String where) throws PolicyException {
    if (e == null || !e.isJsonObject()) {
      throw new PolicyException(where + ": must be an object");
    }
    return e.getAsJsonObject();
  }

  private static void onlyKeys(JsonObject o, Set<String> allowed, String where) throws PolicyException {
    for (String key : o.keySet()) {
      if (!allowed.contains(key)) {
        throw new PolicyException(where + ": unknown key \"" + key + "\" (allowed: " + allowed + ")");
      }
    }
  }
}
