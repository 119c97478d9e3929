package dev.redlockd.it.ops;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.redlockd.testing.MissingRuntime;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus process (Debian's binary from PATH) scraping one target every second and
 * evaluating the given rule files every second, its storage and log under the module's target/
 * directory, and its HTTP API on a free loopback port. {@link #close()} stops it and waits.
 */
final class Prometheus implements AutoCloseable {
  private final Process process;
  private final Path dir;
  private final int port;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private Prometheus(Process process, Path dir, int port) {
    this.process = process;
    this.dir = dir;
    this.port = port;
  }

  /** The path of a Prometheus tool on PATH; skipped locally when missing, a failure under CI=true. */
  static Path tool(String name) {
    for (String entry : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      Path candidate = Path.of(entry, name);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    MissingRuntime.skipOrFail("no " + name + " on PATH: apt-get install prometheus");
    throw new IllegalStateException("unreachable");
  }

  static Prometheus start(List<Path> rules, String job, int targetPort) throws IOException, InterruptedException {
    Path binary = tool("prometheus");
    Path dir = Files.createDirectories(Path.of("target"))
        .resolve("prometheus-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    Files.createDirectories(dir);
    Path config = Files.writeString(dir.resolve("prometheus.yml"), """
        global:
          scrape_interval: 1s
          scrape_timeout: 900ms
          evaluation_interval: 1s
        rule_files: [%s]
        scrape_configs:
          - job_name: %s
            static_configs:
              - targets: ['127.0.0.1:%d']
        """.formatted(String.join(", ", rules.stream().map(r -> "'" + r.toAbsolutePath() + "'").toList()), job,
        targetPort));
    int port = freePort();
    Process process = new ProcessBuilder(binary.toString(),
        "--config.file=" + config.toAbsolutePath(),
        "--storage.tsdb.path=" + dir.resolve("data").toAbsolutePath(),
        "--web.listen-address=127.0.0.1:" + port,
        "--log.level=warn")
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("prometheus.log").toFile())
        .start();
    Prometheus prometheus = new Prometheus(process, dir, port);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!prometheus.ready()) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        prometheus.close();
        throw new IllegalStateException("Prometheus did not become ready: " + prometheus.log());
      }
      Thread.sleep(100);
    }
    return prometheus;
  }

  private boolean ready() {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/-/ready")).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** GET on the HTTP API; the "data" of a successful answer, else an AssertionError naming the error. */
  JsonElement api(String path, String... params) {
    StringBuilder uri = new StringBuilder("http://127.0.0.1:" + port + path);
    for (int i = 0; i < params.length; i += 2) {
      uri.append(i == 0 ? '?' : '&').append(params[i]).append('=')
          .append(URLEncoder.encode(params[i + 1], StandardCharsets.UTF_8));
    }
    try {
      HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(uri.toString()))
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
      JsonObject body = JsonParser.parseString(response.body()).getAsJsonObject();
      if (!"success".equals(body.get("status").getAsString())) {
        throw new AssertionError(path + " " + String.join(" ", params) + ": " + body);
      }
      return body.get("data");
    } catch (IOException e) {
      throw new AssertionError(path + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The series an instant query returns now (an error in the query is an AssertionError). */
  List<JsonObject> query(String promql) {
    List<JsonObject> series = new ArrayList<>();
    JsonObject data = api("/api/v1/query", "query", promql).getAsJsonObject();
    if (data.get("resultType").getAsString().equals("vector")) {
      data.getAsJsonArray("result").forEach(s -> series.add(s.getAsJsonObject()));
    }
    return series;
  }

  String log() {
    try {
      return Files.readString(dir.resolve("prometheus.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
