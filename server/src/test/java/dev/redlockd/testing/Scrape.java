package dev.redlockd.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One scrape of a server's {@code /metrics} over HTTP, parsed from the Prometheus text format
 * into series: a name, its labels and a value.
 */
public final class Scrape {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  private final String text;
  private final List<Series> series;

  private Scrape(String text, List<Series> series) {
    this.text = text;
    this.series = series;
  }

  public record Series(String name, Map<String, String> labels, double value) {}

  /** GET http://127.0.0.1:port/metrics; fails unless it answers 200. */
  public static Scrape of(int port) {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
        .timeout(Duration.ofSeconds(10))
        .build();
    try {
      HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException("GET /metrics answered " + response.statusCode());
      }
      return parse(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public static Scrape parse(String text) {
    List<Series> series = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int brace = line.indexOf('{');
      int space = line.lastIndexOf(' ');
      Map<String, String> labels = new LinkedHashMap<>();
      String name;
      if (brace >= 0 && brace < space) {
        name = line.substring(0, brace);
        Matcher m = LABEL.matcher(line.substring(brace, line.lastIndexOf('}') + 1));
        while (m.find()) {
          labels.put(m.group(1), m.group(2));
        }
      } else {
        name = line.substring(0, space);
      }
      series.add(new Series(name, labels, Double.parseDouble(line.substring(space + 1))));
    }
    return new Scrape(text, List.copyOf(series));
  }

  /**
   * The sum over the series of this name whose labels include these name/value pairs: one
   * series, or an aggregate over the labels not given. 0 when none matches (a counter not
   * yet incremented is not exposed).
   */
  public double value(String name, String... labelPairs) {
    if (labelPairs.length % 2 != 0) {
      throw new IllegalArgumentException("label names and values come in pairs");
    }
    double sum = 0;
    for (Series s : series) {
      if (s.name().equals(name) && matches(s.labels(), labelPairs)) {
        sum += s.value();
      }
    }
    return sum;
  }

  /** Whether any series of this name is exposed. */
  public boolean has(String name) {
    return series.stream().anyMatch(s -> s.name().equals(name));
  }

  public List<Series> series() {
    return series;
  }

  /** The body as served. */
  public String text() {
    return text;
  }

  private static boolean matches(Map<String, String> labels, String[] pairs) {
    for (int i = 0; i < pairs.length; i += 2) {
      if (!pairs[i + 1].equals(labels.get(pairs[i]))) {
        return false;
      }
    }
    return true;
  }
}
