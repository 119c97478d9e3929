package dev.redlockd.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A redlockd server's Prometheus metrics (its {@code --metrics-port}), read over HTTP and parsed
 * just enough to find one series' value by its name and labels.
 */
final class ServerMetrics {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final URI uri;

  ServerMetrics(int port) {
    this.uri = URI.create("http://127.0.0.1:" + port + "/metrics");
  }

  /** One sample: {@code name{labels} value}. */
  record Sample(String name, Map<String, String> labels, double value) {}

  List<Sample> scrape() {
    try {
      HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build();
      return parse(http.send(request, HttpResponse.BodyHandlers.ofString()).body());
    } catch (IOException e) {
      throw new IllegalStateException("could not read " + uri + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading " + uri, e);
    }
  }

  /** The samples of the text exposition format; comments and blank lines skipped. */
  static List<Sample> parse(String text) {
    List<Sample> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      line = line.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int brace = line.indexOf('{');
      int space = line.lastIndexOf(' ');
      Map<String, String> labels = new LinkedHashMap<>();
      String name;
      if (brace >= 0 && brace < space) {
        name = line.substring(0, brace);
        labels = labels(line.substring(brace + 1, line.lastIndexOf('}')));
      } else {
        name = line.substring(0, space);
      }
      samples.add(new Sample(name, labels, Double.parseDouble(line.substring(space + 1))));
    }
    return samples;
  }

  /** The value of the series {@code name} carrying all of {@code labels}; NaN when there is none. */
  static double value(List<Sample> samples, String name, Map<String, String> labels) {
    for (Sample s : samples) {
      if (s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet())) {
        return s.value();
      }
    }
    return Double.NaN;
  }

  /** {@code a="x",b="y"}; label values here are host:port, reasons and codes: no quotes or commas inside. */
  private static Map<String, String> labels(String text) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (String pair : text.split(",")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        labels.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip().replaceAll("^\"|\"$", ""));
      }
    }
    return labels;
  }
}
