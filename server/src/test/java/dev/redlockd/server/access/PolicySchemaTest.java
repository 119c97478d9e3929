package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.InputStream;
import java.io.StringReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The shipped JSON Schema and the loader agree: every file the loader accepts the schema accepts,
 * and every file the schema refuses the loader refuses (the loader may refuse more: an identity
 * listed twice). Checked with a small validator for the keywords the schema uses (no schema
 * library is on the build's path); an unsupported keyword fails the test rather than pass unseen.
 */
class PolicySchemaTest {
  private static final JsonObject SCHEMA = loadSchema();

  @Test
  void documentedExampleIsValid() {
    assertThat(valid(PolicyParserTest.TWO_TEAMS)).isTrue();
    assertThat(valid(PolicyParserTest.ELECTIONS_V2)).isTrue();
  }

  /** Campaign and observe grants are version 2's: a version 1 file with them is refused by both. */
  @Test
  void electionGrantsNeedVersionTwo() {
    String v1 = "{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"campaign\": [\"x\"]}]}";
    assertThat(valid(v1)).isFalse();
    assertThat(valid(v1.replace("\"version\": 1", "\"version\": 2"))).isTrue();
    assertThat(valid("{\"version\": 3, \"identities\": []}")).isFalse();
    assertThat(valid("{\"version\": 2, \"identities\": [], \"default_limits\": {\"election_streams\": 1}}"))
        .isTrue();
  }

  @Test
  void schemaRefusesWhatTheLoaderRefuses() {
    assertThat(valid("{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"lokc\": []}]}")).isFalse();
    assertThat(valid("{\"version\": 1, \"identities\": [{\"identity\": \"a*b\"}]}")).isFalse();
    assertThat(valid("{\"version\": 1, \"identities\": [{\"identity\": \"a\", \"limits\": {\"held_leases\": -1}}]}"))
        .isFalse();
  }

  @Test
  void fuzzedFilesGetTheSameVerdictFromSchemaAndLoader() {
    fuzz(PolicyParserTest.TWO_TEAMS, 1919);
    fuzz(PolicyParserTest.ELECTIONS_V2, 2020);
  }

  private static void fuzz(String original, long seed) {
    Random random = new Random(seed);
    String alphabet = "{}[]\":,01*/ -abcdefghijklmnopqrstuvwxyz_";
    int loaded = 0;
    int refusedBySchema = 0;
    for (int i = 0; i < 5_000; i++) {
      StringBuilder text = new StringBuilder(original);
      int at = random.nextInt(text.length());
      switch (random.nextInt(3)) {
        case 0 -> text.deleteCharAt(at);
        case 1 -> text.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
        default -> text.setCharAt(at, alphabet.charAt(random.nextInt(alphabet.length())));
      }
      boolean loads;
      try {
        PolicyParser.parse(text.toString());
        loads = true;
      } catch (PolicyException e) {
        loads = false;
      }
      if (loads) {
        assertThat(valid(text.toString())).as(text.toString()).isTrue();
      }
      if (!valid(text.toString())) {
        assertThat(loads).as(text.toString()).isFalse();
      }
      loaded += loads ? 1 : 0;
      refusedBySchema += valid(text.toString()) ? 0 : 1;
    }
    assertThat(loaded).isPositive(); // both verdicts were seen, so both directions were tested
    assertThat(refusedBySchema).isPositive();
  }

  private static boolean valid(String text) {
    JsonElement document;
    try {
      JsonReader reader = new JsonReader(new StringReader(text));
      reader.setStrictness(Strictness.STRICT);
      document = JsonParser.parseReader(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        return false;
      }
    } catch (Exception e) {
      return false;
    }
    return check(SCHEMA, document);
  }

  private static boolean check(JsonObject schema, JsonElement value) {
    for (Map.Entry<String, JsonElement> keyword : schema.entrySet()) {
      JsonElement arg = keyword.getValue();
      boolean ok = switch (keyword.getKey()) {
        case "$schema", "title", "description", "$defs" -> true;
        case "$ref" -> check(resolve(arg.getAsString()), value);
        case "anyOf" -> arg.getAsJsonArray().asList().stream().anyMatch(sub -> check(sub.getAsJsonObject(), value));
        case "type" -> hasType(arg.getAsString(), value);
        case "const" -> value.isJsonPrimitive() && value.getAsJsonPrimitive().isNumber()
            && new BigDecimal(value.getAsString()).compareTo(arg.getAsBigDecimal()) == 0;
        case "minimum" -> !isNumber(value) || new BigDecimal(value.getAsString()).compareTo(arg.getAsBigDecimal()) >= 0;
        case "maximum" -> !isNumber(value) || new BigDecimal(value.getAsString()).compareTo(arg.getAsBigDecimal()) <= 0;
        case "minLength" -> !isString(value) || value.getAsString().codePointCount(0, value.getAsString().length())
            >= arg.getAsInt();
        case "pattern" -> !isString(value)
            || java.util.regex.Pattern.compile(arg.getAsString()).matcher(value.getAsString()).find();
        case "required" -> !value.isJsonObject() || arg.getAsJsonArray().asList().stream()
            .allMatch(name -> value.getAsJsonObject().has(name.getAsString()));
        case "properties" -> !value.isJsonObject() || value.getAsJsonObject().entrySet().stream()
            .allMatch(e -> !arg.getAsJsonObject().has(e.getKey())
                || check(arg.getAsJsonObject().getAsJsonObject(e.getKey()), e.getValue()));
        case "additionalProperties" -> arg.getAsBoolean() || !value.isJsonObject()
            || schema.getAsJsonObject("properties").keySet().containsAll(value.getAsJsonObject().keySet());
        case "items" -> !value.isJsonArray()
            || value.getAsJsonArray().asList().stream().allMatch(item -> check(arg.getAsJsonObject(), item));
        default -> throw new AssertionError("schema keyword not supported by this test: " + keyword.getKey());
      };
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  private static boolean hasType(String type, JsonElement value) {
    return switch (type) {
      case "object" -> value.isJsonObject();
      case "array" -> value.isJsonArray();
      case "string" -> isString(value);
      case "integer" -> isNumber(value) && new BigDecimal(value.getAsString()).stripTrailingZeros().scale() <= 0;
      default -> throw new AssertionError("type not supported by this test: " + type);
    };
  }

  private static boolean isNumber(JsonElement value) {
    return value.isJsonPrimitive() && value.getAsJsonPrimitive().isNumber();
  }

  private static boolean isString(JsonElement value) {
    return value.isJsonPrimitive() && value.getAsJsonPrimitive().isString();
  }

  private static JsonObject resolve(String ref) {
    assertThat(ref).startsWith("#/$defs/");
    return SCHEMA.getAsJsonObject("$defs").getAsJsonObject(ref.substring("#/$defs/".length()));
  }

  private static JsonObject loadSchema() {
    try (InputStream in = PolicyParser.class.getResourceAsStream("policy.schema.json")) {
      return JsonParser.parseString(new String(in.readAllBytes(), StandardCharsets.UTF_8)).getAsJsonObject();
    } catch (Exception e) {
      throw new IllegalStateException("policy.schema.json not readable", e);
    }
  }
}
