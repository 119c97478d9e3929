package dev.redlockd.it.conformance;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.redlockd.client.Leader;
import dev.redlockd.client.Leadership;
import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockServiceException;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The Java client's conformance runner: performs one scenario of clients/conformance/README.md
 * with {@link LockClient} and prints what it saw, as every other language's runner does. Run
 * as its own process by {@link ConformanceTest}, like the runners of the other languages.
 */
public final class JavaRunner {
  // serializeNulls: "no leader" is a JSON null, which must be printed, not left out.
  private static final Gson GSON = new com.google.gson.GsonBuilder().serializeNulls().create();
  private static final long ORIGIN = System.nanoTime();

  private final String server;
  private final String resource;
  private final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
  private final List<ManagedChannel> channels = new ArrayList<>();

  private JavaRunner(String server, String resource) {
    this.server = server;
    this.resource = resource;
  }

  public static void main(String[] args) throws Exception {
    String server = null;
    String scenario = null;
    String resource = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--server" -> server = args[i + 1];
        case "--scenario" -> scenario = args[i + 1];
        case "--resource" -> resource = args[i + 1];
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (server == null || scenario == null || resource == null) {
      throw new IllegalArgumentException("usage: --server HOST:PORT --scenario NAME --resource R");
    }
    JavaRunner runner = new JavaRunner(server, resource);
    try {
      JsonObject facts = runner.run(scenario);
      facts.addProperty("event", "result");
      facts.addProperty("scenario", scenario);
      System.out.println(GSON.toJson(facts));
      System.out.flush();
    } finally {
      runner.channels.forEach(ManagedChannel::shutdownNow);
    }
    System.exit(0);
  }

  private JsonObject run(String scenario) throws Exception {
    return switch (scenario) {
      case "acquire-contended" -> acquireContended();
      case "release-twice" -> releaseTwice();
      case "extend" -> extend();
      case "keep-alive" -> keepAlive();
      case "majority-frozen" -> majorityFrozen();
      case "lost-answer" -> lostAnswer();
      case "invalid-argument" -> invalidArgument();
      case "concurrent-holders" -> concurrentHolders();
      case "campaign-handover" -> campaignHandover();
      case "observe" -> observe();
      default -> throw new IllegalArgumentException("unknown scenario " + scenario);
    };
  }

  private JsonObject acquireContended() throws IOException {
    LockClient a = client(Duration.ofSeconds(5));
    Lease lease = a.acquire(resource, Duration.ofSeconds(10), Duration.ZERO);
    await("held");
    LockClient b = client(Duration.ofSeconds(5));
    Optional<Lease> tried = b.tryAcquire(resource, Duration.ofSeconds(10));
    JsonObject competitor = errorOf(() -> b.acquire(resource, Duration.ofSeconds(10), Duration.ofMillis(300)));
    JsonObject facts = new JsonObject();
    facts.addProperty("fencing_token", Long.toUnsignedString(lease.fencingToken()));
    facts.addProperty("valid", lease.isValid());
    facts.addProperty("remaining_ms", lease.remaining().toMillis());
    facts.addProperty("lease_string", lease.toString());
    facts.addProperty("try_acquire", tried.isPresent() ? "lease" : "none");
    facts.add("competitor_error", competitor);
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject releaseTwice() throws IOException {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, Duration.ofSeconds(10), Duration.ZERO);
    await("held");
    JsonObject facts = new JsonObject();
    facts.addProperty("first_release", lease.release());
    facts.addProperty("second_release", lease.release());
    facts.addProperty("valid_after", lease.isValid());
    return facts;
  }

  private JsonObject extend() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, Duration.ofSeconds(2), Duration.ZERO);
    Thread.sleep(500);
    lease.extend(Duration.ofSeconds(3));
    JsonObject facts = new JsonObject();
    facts.addProperty("remaining_after_extend_ms", lease.remaining().toMillis());
    await("extended");
    Thread.sleep(2000);
    facts.addProperty("valid_after_first_ttl", lease.isValid());
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject keepAlive() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, Duration.ofSeconds(1), Duration.ZERO);
    AtomicInteger lost = new AtomicInteger();
    lease.keepAlive().onLost(e -> lost.incrementAndGet());
    Thread.sleep(1500);
    await("kept");
    Thread.sleep(1500);
    JsonObject facts = new JsonObject();
    facts.addProperty("valid_at_end", lease.isValid());
    facts.addProperty("lost", lost.get() > 0);
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject majorityFrozen() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, Duration.ofSeconds(2), Duration.ZERO);
    AtomicInteger calls = new AtomicInteger();
    AtomicReference<long[]> firstLoss = new AtomicReference<>();
    AtomicReference<LockServiceException> error = new AtomicReference<>();
    CountDownLatch lostLatch = new CountDownLatch(1);
    lease.keepAlive().onLost(e -> {
      long at = System.nanoTime();
      if (calls.getAndIncrement() == 0) {
        firstLoss.set(new long[] {at, lease.deadlineNanos()});
        error.set(e);
      }
      lostLatch.countDown();
    });
    Thread.sleep(300);
    await("freeze");
    long frozen = System.nanoTime();
    lostLatch.await(10, TimeUnit.SECONDS);
    Thread.sleep(500);
    JsonObject facts = new JsonObject();
    facts.addProperty("lost_calls", calls.get());
    long[] loss = firstLoss.get();
    if (loss != null) {
      facts.addProperty("margin_ms", (loss[1] - loss[0]) / 1e6);
      facts.addProperty("waited_ms", (loss[0] - frozen) / 1e6);
      facts.add("lost_error", describe(error.get()));
    }
    facts.addProperty("valid_after_lost", lease.isValid());
    return facts;
  }

  private JsonObject lostAnswer() throws IOException {
    LockClient impatient = client(Duration.ofMillis(300));
    await("pause");
    long start = System.nanoTime();
    Lease lease = impatient.acquire(resource, Duration.ofSeconds(10), Duration.ZERO);
    long elapsed = System.nanoTime() - start;
    JsonObject facts = new JsonObject();
    facts.addProperty("acquired", lease.isValid());
    facts.addProperty("elapsed_ms", elapsed / 1e6);
    await("held");
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject invalidArgument() {
    LockClient c = client(Duration.ofSeconds(5));
    JsonObject facts = new JsonObject();
    facts.add("empty_resource", errorOf(() -> c.acquire("", Duration.ofSeconds(10), Duration.ZERO)));
    facts.add("zero_ttl", errorOf(() -> c.acquire(resource, Duration.ZERO, Duration.ZERO)));
    facts.add("long_resource",
        errorOf(() -> c.acquire(resource + "x".repeat(600), Duration.ofSeconds(10), Duration.ZERO)));
    return facts;
  }

  private JsonObject concurrentHolders() throws Exception {
    List<LockClient> clients = List.of(client(Duration.ofSeconds(5)), client(Duration.ofSeconds(5)));
    List<long[]> sections = new ArrayList<>();
    ExecutorService workers = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        LockClient mine = clients.get(w % 2);
        done.add(workers.submit(() -> {
          for (int i = 0; i < 5; i++) {
            mine.withLock(resource, Duration.ofSeconds(2), Duration.ofSeconds(20), lease -> {
              long start = System.nanoTime();
              Thread.sleep(5);
              long end = System.nanoTime();
              synchronized (sections) {
                sections.add(new long[] {start, end, lease.fencingToken()});
              }
              return null;
            });
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      workers.shutdownNow();
    }
    JsonArray list = new JsonArray();
    for (long[] s : sections) {
      JsonArray one = new JsonArray();
      one.add((s[0] - ORIGIN) / 1e6);
      one.add((s[1] - ORIGIN) / 1e6);
      one.add(Long.toUnsignedString(s[2]));
      list.add(one);
    }
    JsonObject facts = new JsonObject();
    facts.add("sections", list);
    return facts;
  }

  private JsonObject campaignHandover() throws Exception {
    Duration ttl = Duration.ofSeconds(2);
    LockClient a = client(Duration.ofSeconds(5));
    LockClient b = client(Duration.ofSeconds(5));
    LockClient c = client(Duration.ofSeconds(5));
    Leadership leadingA = a.campaign(resource, "a", ttl);
    AtomicInteger aLost = new AtomicInteger();
    leadingA.onLost(e -> aLost.incrementAndGet());
    await("leading");
    JsonObject facts = new JsonObject();
    facts.addProperty("term_a", Long.toUnsignedString(leadingA.term()));
    facts.add("c_error", errorOf(() -> c.campaign(resource, "c", ttl, Duration.ofMillis(300))));
    CompletableFuture<Leadership> candidateB = b.campaignAsync(resource, "b", ttl, null);
    Thread.sleep(1500);
    facts.addProperty("b_led_early", candidateB.isDone());
    leadingA.proclaim("a2");
    facts.add("leader_after_proclaim", leader(a.leader(resource)));
    long start = System.nanoTime();
    facts.addProperty("resigned", leadingA.resign());
    Leadership leadingB = candidateB.get(10, TimeUnit.SECONDS);
    facts.addProperty("handover_ms", (System.nanoTime() - start) / 1e6);
    facts.addProperty("a_leader_after_resign", leadingA.isLeader());
    facts.addProperty("a_lost", aLost.get() > 0);
    facts.addProperty("term_b", Long.toUnsignedString(leadingB.term()));
    facts.addProperty("b_value", leadingB.value());
    facts.addProperty("b_is_leader", leadingB.isLeader());
    facts.addProperty("b_resigned", leadingB.resign());
    facts.addProperty("second_resign", leadingB.resign());
    facts.add("leader_at_end", leader(b.leader(resource)));
    return facts;
  }

  private JsonObject observe() throws Exception {
    Duration ttl = Duration.ofSeconds(2);
    LockClient a = client(Duration.ofSeconds(5));
    LockClient b = client(Duration.ofSeconds(5));
    List<Optional<Leader>> events = new ArrayList<>();
    AtomicInteger closedAt = new AtomicInteger(-1);
    AtomicInteger late = new AtomicInteger();
    var observation = a.observe(resource, state -> {
      synchronized (events) {
        if (closedAt.get() >= 0) {
          late.incrementAndGet();
        }
        events.add(state);
        events.notifyAll();
      }
    });
    awaitEvents(events, 1, Duration.ofSeconds(5));
    Leadership leadingA = a.campaign(resource, "a", ttl);
    Thread.sleep(300);
    leadingA.resign();
    Thread.sleep(300);
    Leadership leadingB = b.campaign(resource, "b", ttl);
    Thread.sleep(300);
    leadingB.resign();
    awaitEvents(events, 5, Duration.ofSeconds(5));
    observation.close();
    synchronized (events) {
      closedAt.set(events.size());
    }
    Thread.sleep(300);
    JsonArray list = new JsonArray();
    synchronized (events) {
      events.forEach(e -> list.add(leader(e)));
    }
    JsonObject facts = new JsonObject();
    facts.add("events", list);
    facts.addProperty("term_a", Long.toUnsignedString(leadingA.term()));
    facts.addProperty("term_b", Long.toUnsignedString(leadingB.term()));
    facts.addProperty("late_events", late.get());
    return facts;
  }

  private static void awaitEvents(List<?> events, int count, Duration atMost) throws InterruptedException {
    long until = System.nanoTime() + atMost.toNanos();
    synchronized (events) {
      while (events.size() < count && System.nanoTime() < until) {
        events.wait(Math.max(1, (until - System.nanoTime()) / 1_000_000));
      }
    }
  }

  /** {@code null} for no leader, else {@code [value, term]}. */
  private static com.google.gson.JsonElement leader(Optional<Leader> leader) {
    if (leader.isEmpty()) {
      return com.google.gson.JsonNull.INSTANCE;
    }
    JsonArray pair = new JsonArray();
    pair.add(leader.get().value());
    pair.add(Long.toUnsignedString(leader.get().term()));
    return pair;
  }

  private LockClient client(Duration callTimeout) {
    ManagedChannel channel = Grpc.newChannelBuilder(server, InsecureChannelCredentials.create()).build();
    channels.add(channel);
    return LockClient.builder(channel).callTimeout(callTimeout).build();
  }

  /** Tells the harness this point is reached and waits for its answer line. */
  private void await(String point) throws IOException {
    JsonObject event = new JsonObject();
    event.addProperty("event", "await");
    event.addProperty("name", point);
    System.out.println(GSON.toJson(event));
    System.out.flush();
    if (stdin.readLine() == null) {
      throw new IllegalStateException("the harness closed standard input at " + point);
    }
  }

  private static JsonObject errorOf(Runnable call) {
    try {
      call.run();
    } catch (LockServiceException e) {
      return describe(e);
    }
    throw new AssertionError("the call succeeded");
  }

  private static JsonObject describe(LockServiceException e) {
    JsonObject error = new JsonObject();
    error.addProperty("type", e.getClass().getSimpleName());
    error.addProperty("code", e.status().getCode().name());
    error.addProperty("message", e.toString());
    return error;
  }
}
