package dev.redlockd.it.conformance;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.redlockd.client.CampaignOptions;
import dev.redlockd.client.Channels;
import dev.redlockd.client.Leader;
import dev.redlockd.client.Leadership;
import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import dev.redlockd.client.LockServiceException;
import io.grpc.ConnectivityState;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The Java client's conformance runner: performs one scenario of clients/conformance/README.md
 * with {@link LockClient} and prints what it saw, as every other language's runner does. Run
 * as its own process by {@link ConformanceTest}, like the runners of the other languages.
 */
public final class JavaRunner {
  // serializeNulls: "no leader" is a JSON null, which must be printed, not left out.
  private static final Gson GSON = new com.google.gson.GsonBuilder().serializeNulls().create();
  private static final long ORIGIN = System.nanoTime();

  /** One or more replicas, comma-separated: every client gets all of them (rule 16). */
  private final String server;
  private final String resource;
  private final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final Beliefs beliefs = new Beliefs();
  /** hold-many's load (the rolling-restart run): leases and leaderships. */
  private int holdCount;
  private int holdElections;
  private Duration holdTtl = Duration.ofSeconds(10);

  private JavaRunner(String server, String resource) {
    this.server = server;
    this.resource = resource;
  }

  public static void main(String[] args) throws Exception {
    String server = null;
    String scenario = null;
    String resource = null;
    int count = 0;
    int elections = 0;
    Duration ttl = Duration.ofSeconds(10);
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--server" -> server = args[i + 1];
        case "--scenario" -> scenario = args[i + 1];
        case "--resource" -> resource = args[i + 1];
        case "--count" -> count = Integer.parseInt(args[i + 1]);
        case "--elections" -> elections = Integer.parseInt(args[i + 1]);
        case "--ttl-ms" -> ttl = Duration.ofMillis(Long.parseLong(args[i + 1]));
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (server == null || scenario == null || resource == null) {
      throw new IllegalArgumentException("usage: --server HOST:PORT[,HOST:PORT...] --scenario NAME --resource R");
    }
    JavaRunner runner = new JavaRunner(server, resource);
    runner.holdCount = count;
    runner.holdElections = elections;
    runner.holdTtl = ttl;
    try {
      JsonObject facts = runner.run(scenario);
      runner.beliefs.endAll();
      facts.addProperty("event", "result");
      facts.addProperty("scenario", scenario);
      emit(facts);
    } finally {
      runner.beliefs.stop();
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
      case "extend-while-kept" -> extendWhileKept();
      // The harness brings a different fault while the runner waits at "kept"; the runner's part is the same.
      case "replica-restart", "replica-silent", "replica-blackhole", "replica-minority", "rolling-restart-fast" ->
          replicaRestart();
      case "release-during-restart" -> releaseDuringRestart();
      case "shutdown-race" -> shutdownRace();
      case "lead" -> lead();
      case "permits" -> permits();
      case "hold-many" -> holdMany();
      default -> throw new IllegalArgumentException("unknown scenario " + scenario);
    };
  }

  private JsonObject acquireContended() throws IOException {
    LockClient a = client(Duration.ofSeconds(5));
    Lease lease = a.acquire(resource, LockOptions.ttl(Duration.ofSeconds(10)));
    beliefs.report(LEASE, lease);
    await("held");
    LockClient b = client(Duration.ofSeconds(5));
    Optional<Lease> tried = b.tryAcquire(resource, LockOptions.ttl(Duration.ofSeconds(10)));
    JsonObject competitor = errorOf(() -> b.acquire(resource,
        LockOptions.ttl(Duration.ofSeconds(10)).waitUpTo(Duration.ofMillis(300))));
    JsonObject facts = new JsonObject();
    facts.addProperty("fencing_token", Long.toUnsignedString(lease.fencingToken()));
    facts.addProperty("valid", lease.isValid());
    facts.addProperty("remaining_ms", lease.remaining().toMillis());
    facts.addProperty("lease_string", lease.toString());
    facts.addProperty("try_acquire", tried.isPresent() ? "lease" : "none");
    facts.add("competitor_error", competitor);
    beliefs.end(LEASE);
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject releaseTwice() throws IOException {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, LockOptions.ttl(Duration.ofSeconds(10)));
    beliefs.report(LEASE, lease);
    await("held");
    JsonObject facts = new JsonObject();
    beliefs.end(LEASE);
    facts.addProperty("first_release", lease.release());
    facts.addProperty("second_release", lease.release());
    facts.addProperty("valid_after", lease.isValid());
    return facts;
  }

  private JsonObject extend() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, LockOptions.ttl(Duration.ofSeconds(2)));
    beliefs.report(LEASE, lease);
    Thread.sleep(500);
    lease.extend(Duration.ofSeconds(3));
    JsonObject facts = new JsonObject();
    facts.addProperty("remaining_after_extend_ms", lease.remaining().toMillis());
    await("extended");
    Thread.sleep(2000);
    facts.addProperty("valid_after_first_ttl", lease.isValid());
    beliefs.end(LEASE);
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject keepAlive() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, LockOptions.ttl(Duration.ofSeconds(1)));
    beliefs.report(LEASE, lease);
    AtomicInteger lost = new AtomicInteger();
    lease.keepAlive().onLost(e -> lost.incrementAndGet());
    Thread.sleep(1500);
    await("kept");
    Thread.sleep(1500);
    JsonObject facts = new JsonObject();
    facts.addProperty("valid_at_end", lease.isValid());
    facts.addProperty("lost", lost.get() > 0);
    beliefs.end(LEASE);
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject majorityFrozen() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, LockOptions.ttl(Duration.ofSeconds(2)));
    beliefs.report(LEASE, lease);
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
    beliefs.end(LEASE);
    return facts;
  }

  private JsonObject lostAnswer() throws IOException, InterruptedException {
    LockClient impatient = client(Duration.ofMillis(300));
    // Connected before the harness pauses the nodes: what the scenario times is an answer lost,
    // not this JVM's first connection, whose class loading alone can outlast 300 ms (four times
    // over) on a busy machine.
    awaitReady(channels.get(channels.size() - 1));
    await("pause");
    long start = System.nanoTime();
    Lease lease = impatient.acquire(resource, LockOptions.ttl(Duration.ofSeconds(10)));
    long elapsed = System.nanoTime() - start;
    JsonObject facts = new JsonObject();
    facts.addProperty("acquired", lease.isValid());
    facts.addProperty("elapsed_ms", elapsed / 1e6);
    beliefs.report(LEASE, lease);
    await("held");
    beliefs.end(LEASE);
    try {
      facts.addProperty("released", lease.release());
    } catch (LockServiceException e) { // no answer within 300 ms: reported, the harness judges it
      facts.add("release_error", describe(e));
    }
    return facts;
  }

  private JsonObject invalidArgument() {
    LockClient c = client(Duration.ofSeconds(5));
    JsonObject facts = new JsonObject();
    facts.add("empty_resource", errorOf(() -> c.acquire("", LockOptions.ttl(Duration.ofSeconds(10)))));
    facts.add("zero_ttl", errorOf(() -> c.acquire(resource, LockOptions.ttl(Duration.ZERO))));
    facts.add("long_resource",
        errorOf(() -> c.acquire(resource + "x".repeat(600), LockOptions.ttl(Duration.ofSeconds(10)))));
    return facts;
  }

  /** permits: N + 3 workers, each with a client of its own, share a semaphore of N permits for 4 s. */
  private JsonObject permits() throws Exception {
    final int n = 3;
    final long runNanos = Duration.ofSeconds(4).toNanos();
    List<LockClient> clients = new ArrayList<>();
    for (int w = 0; w < n + 3; w++) {
      clients.add(client(Duration.ofSeconds(5)));
    }
    AtomicInteger acquired = new AtomicInteger();
    java.util.Set<Integer> seen = new java.util.concurrent.ConcurrentSkipListSet<>();
    JsonArray errors = new JsonArray();
    ExecutorService workers = Executors.newFixedThreadPool(n + 3);
    long began = System.nanoTime();
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < n + 3; w++) {
        int worker = w;
        LockClient mine = clients.get(w);
        done.add(workers.submit(() -> {
          while (System.nanoTime() - began < runNanos) {
            try {
              permitRound(mine, worker, n, acquired, seen, errors);
            } catch (LockServiceException e) {
              synchronized (errors) {
                errors.add(describe(e));
              }
            } catch (InterruptedException e) {
              throw e;
            } catch (RuntimeException e) {
              JsonObject error = new JsonObject();
              error.addProperty("type", e.getClass().getSimpleName());
              error.addProperty("code", "UNKNOWN");
              error.addProperty("message", e.toString());
              synchronized (errors) {
                errors.add(error);
              }
            }
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
    JsonObject facts = new JsonObject();
    facts.addProperty("acquired", acquired.get());
    JsonArray permits = new JsonArray();
    seen.forEach(permits::add);
    facts.add("permits_seen", permits);
    facts.add("errors", errors);
    return facts;
  }

  /** One permit: acquired, kept alive, held 50 to 150 ms, reported, released. */
  private void permitRound(LockClient client, int worker, int n, AtomicInteger acquired, java.util.Set<Integer> seen,
      JsonArray errors) throws InterruptedException {
    Lease permit = client.acquirePermit(resource, n,
        LockOptions.ttl(Duration.ofSeconds(2)).waitUpTo(Duration.ofSeconds(3)));
    long start = System.nanoTime();
    acquired.incrementAndGet();
    seen.add(permit.permit());
    boolean released;
    try {
      permit.keepAlive();
      Thread.sleep(50 + java.util.concurrent.ThreadLocalRandom.current().nextInt(101));
      long end = System.nanoTime();
      JsonObject event = new JsonObject();
      event.addProperty("event", "permit");
      event.addProperty("worker", worker);
      event.addProperty("permit", permit.permit());
      event.addProperty("fencing_token", Long.toUnsignedString(permit.fencingToken()));
      event.addProperty("start_ns", Long.toString(start));
      event.addProperty("end_ns", Long.toString(end));
      emit(event);
    } finally {
      released = permit.release();
    }
    if (!released) {
      JsonObject error = new JsonObject();
      error.addProperty("type", "NotReleased");
      error.addProperty("code", "OK");
      error.addProperty("message", "permit " + permit.permit());
      synchronized (errors) {
        errors.add(error);
      }
    }
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
            mine.withLock(resource, LockOptions.ttl(Duration.ofSeconds(2)).waitUpTo(Duration.ofSeconds(20)), lease -> {
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
    Leadership leadingA = a.campaign(resource, CampaignOptions.value("a").ttl(ttl));
    beliefs.report(LEADERSHIP, leadingA);
    AtomicInteger aLost = new AtomicInteger();
    leadingA.onLost(e -> aLost.incrementAndGet());
    await("leading");
    JsonObject facts = new JsonObject();
    facts.addProperty("term_a", Long.toUnsignedString(leadingA.term()));
    facts.add("c_error", errorOf(() -> c.campaign(resource,
        CampaignOptions.value("c").ttl(ttl).waitUpTo(Duration.ofMillis(300)))));
    CompletableFuture<Leadership> candidateB = b.campaignAsync(resource, CampaignOptions.value("b").ttl(ttl));
    Thread.sleep(1500);
    facts.addProperty("b_led_early", candidateB.isDone());
    leadingA.proclaim("a2");
    facts.add("leader_after_proclaim", leader(a.leader(resource)));
    beliefs.end(LEADERSHIP);
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
    awaitEvents(events, seen -> !seen.isEmpty(), Duration.ofSeconds(5));
    Leadership leadingA = a.campaign(resource, CampaignOptions.value("a").ttl(ttl));
    beliefs.report(LEADERSHIP, leadingA);
    Thread.sleep(300);
    beliefs.end(LEADERSHIP);
    leadingA.resign();
    Thread.sleep(300);
    Leadership leadingB = b.campaign(resource, CampaignOptions.value("b").ttl(ttl));
    Thread.sleep(300);
    leadingB.resign();
    // A term may rise while A leads (a sixth change), so B's resign is awaited as a last vacancy.
    awaitEvents(events, seen -> seen.size() >= 5 && seen.get(seen.size() - 1).isEmpty(), Duration.ofSeconds(5));
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

  private JsonObject extendWhileKept() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, LockOptions.ttl(Duration.ofSeconds(2)));
    beliefs.report(LEASE, lease);
    AtomicInteger lost = new AtomicInteger();
    CountDownLatch lostLatch = new CountDownLatch(1);
    lease.keepAlive().onLost(e -> {
      lost.incrementAndGet();
      lostLatch.countDown();
    });
    await("kept");
    lease.extend(Duration.ofSeconds(6)); // through the stream (rule 15)
    await("longer");
    JsonObject facts = new JsonObject();
    facts.addProperty("valid_after_longer", lease.isValid());
    Thread.sleep(500);
    lease.extend(Duration.ofSeconds(1));
    facts.addProperty("remaining_after_shorter_ms", lease.remaining().toNanos() / 1e6);
    await("shorter");
    lostLatch.await(3, TimeUnit.SECONDS);
    facts.addProperty("fencing_token", Long.toUnsignedString(lease.fencingToken()));
    facts.addProperty("lost_calls", lost.get());
    facts.addProperty("valid_at_end", lease.isValid());
    beliefs.end(LEASE);
    facts.addProperty("released", lease.release());
    return facts;
  }

  private JsonObject replicaRestart() throws Exception {
    Duration ttl = Duration.ofSeconds(3);
    LockClient c = client(Duration.ofSeconds(5));
    Lease lease = c.acquire(resource, LockOptions.ttl(ttl));
    beliefs.report(LEASE, lease);
    AtomicInteger leaseLost = new AtomicInteger();
    lease.keepAlive().onLost(e -> leaseLost.incrementAndGet());
    Leadership leading = c.campaign(resource, CampaignOptions.value("a").ttl(ttl));
    beliefs.report(LEADERSHIP, leading);
    AtomicInteger leadershipLost = new AtomicInteger();
    leading.onLost(e -> leadershipLost.incrementAndGet());
    JsonObject facts = new JsonObject();
    facts.addProperty("fencing_token", Long.toUnsignedString(lease.fencingToken()));
    facts.addProperty("term", Long.toUnsignedString(leading.term()));
    await("kept");
    facts.addProperty("valid", lease.isValid());
    facts.addProperty("is_leader", leading.isLeader());
    facts.addProperty("fencing_token_after", Long.toUnsignedString(lease.fencingToken()));
    facts.addProperty("term_after", Long.toUnsignedString(leading.term()));
    facts.addProperty("lease_lost_calls", leaseLost.get());
    facts.addProperty("leadership_lost_calls", leadershipLost.get());
    beliefs.end(LEASE);
    facts.addProperty("released", lease.release());
    beliefs.end(LEADERSHIP);
    facts.addProperty("resigned", leading.resign());
    return facts;
  }

  /**
   * Three rounds: a lease (not kept), and right after the harness's SIGTERM of a replica an
   * Extend, a Describe and a Release of it, each noted: idempotent calls retried on another
   * replica within their deadline. No beliefs: the lease is released within the round.
   */
  private JsonObject releaseDuringRestart() throws Exception {
    ManagedChannel channel = Channels.forAddresses(server, InsecureChannelCredentials.create()).build();
    channels.add(channel);
    Duration callTimeout = Duration.ofSeconds(5);
    LockClient c = LockClient.builder(channel).callTimeout(callTimeout).build();
    JsonArray extendsDone = new JsonArray();
    JsonArray describes = new JsonArray();
    JsonArray releases = new JsonArray();
    for (int round = 1; round <= 3; round++) {
      Lease lease = c.acquire(resource, LockOptions.ttl(Duration.ofSeconds(10)));
      await("held");
      try {
        lease.extend(Duration.ofSeconds(10));
        extendsDone.add("ok");
      } catch (LockServiceException e) {
        extendsDone.add(describe(e));
      }
      try {
        describes.add(Describes.held(channel, resource, callTimeout));
      } catch (StatusRuntimeException e) {
        describes.add(describe(e));
      }
      try {
        releases.add(lease.release());
      } catch (LockServiceException e) {
        releases.add(describe(e));
      }
    }
    JsonObject facts = new JsonObject();
    facts.add("extends", extendsDone);
    facts.add("describes", describes);
    facts.add("releases", releases);
    return facts;
  }

  /**
   * hold-many's loss callbacks, each with when it came (ms after the "held" await point, negative
   * before it) and why, for the rolling-restart run's report of where a restart loses.
   */
  private static final class Losses {
    private volatile long since = System.nanoTime();
    private final List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());

    void held() {
      since = System.nanoTime();
    }

    void record(String kind, Throwable cause) {
      String why = String.valueOf(cause.getMessage());
      seen.add(String.format("%s %+d ms %s: %s", kind,
          java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since), cause.getClass().getSimpleName(),
          why.substring(0, Math.min(160, why.length()))));
    }

    com.google.gson.JsonArray facts() {
      com.google.gson.JsonArray all = new com.google.gson.JsonArray();
      synchronized (seen) {
        seen.forEach(all::add);
      }
      return all;
    }
  }

  /** The rolling-restart run's load: many kept leases and leaderships on one client, no beliefs. */
  private JsonObject holdMany() throws Exception {
    LockClient c = client(Duration.ofSeconds(5));
    Duration ttl = holdTtl;
    List<Lease> leases = new ArrayList<>();
    List<Long> fences = new ArrayList<>();
    AtomicInteger leasesLost = new AtomicInteger();
    Losses losses = new Losses();
    for (int i = 0; i < holdCount; i++) {
      Lease lease = c.acquire(resource + "/" + i, LockOptions.ttl(ttl).waitUpTo(Duration.ofSeconds(10)));
      String kind = "lease " + i;
      lease.keepAlive().onLost(e -> {
        leasesLost.incrementAndGet();
        losses.record(kind, e);
      });
      leases.add(lease);
      fences.add(lease.fencingToken());
    }
    List<java.util.concurrent.CompletableFuture<Leadership>> campaigns = new ArrayList<>();
    for (int i = 0; i < holdElections; i++) {
      String election = resource + "/e" + i;
      campaigns.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> c.campaign(election,
          CampaignOptions.value("java").ttl(ttl))));
    }
    List<Leadership> leaderships = new ArrayList<>();
    List<Long> terms = new ArrayList<>();
    AtomicInteger leadershipsLost = new AtomicInteger();
    for (var campaign : campaigns) {
      Leadership leadership = campaign.join();
      String kind = "leadership " + leaderships.size();
      leadership.onLost(e -> {
        leadershipsLost.incrementAndGet();
        losses.record(kind, e);
      });
      leaderships.add(leadership);
      terms.add(leadership.term());
    }
    losses.held();
    await("held");
    JsonObject facts = new JsonObject();
    facts.addProperty("leases", leases.size());
    facts.addProperty("leases_valid", leases.stream().filter(Lease::isValid).count());
    facts.addProperty("leases_lost", leasesLost.get());
    int fencingChanged = 0;
    for (int i = 0; i < leases.size(); i++) {
      fencingChanged += leases.get(i).fencingToken() != fences.get(i) ? 1 : 0;
    }
    facts.addProperty("fencing_changed", fencingChanged);
    facts.addProperty("leaderships", leaderships.size());
    facts.addProperty("leading", leaderships.stream().filter(Leadership::isLeader).count());
    facts.addProperty("leaderships_lost", leadershipsLost.get());
    int termsChanged = 0;
    for (int i = 0; i < leaderships.size(); i++) {
      termsChanged += leaderships.get(i).term() != terms.get(i) ? 1 : 0;
    }
    facts.addProperty("terms_changed", termsChanged);
    facts.add("losses", losses.facts());
    facts.addProperty("released", leases.stream().filter(Lease::release).count());
    facts.addProperty("resigned", leaderships.stream().filter(Leadership::resign).count());
    return facts;
  }

  /**
   * A leads by lead(); a majority of nodes freezes; A's work must be interrupted before A's
   * deadline, and B's work (queued behind A) may start only after that.
   */
  private JsonObject lead() throws Exception {
    Duration ttl = Duration.ofSeconds(2);
    LockClient a = client(Duration.ofSeconds(5));
    LockClient b = client(Duration.ofSeconds(5));
    CompletableFuture<long[]> aStarted = new CompletableFuture<>(); // {mono_ns, term}
    CompletableFuture<long[]> aCancelled = new CompletableFuture<>(); // {mono_ns, deadline}
    CompletableFuture<long[]> bStarted = new CompletableFuture<>(); // {mono_ns, term}
    CompletableFuture<Throwable> aEnded = inBackground("lead-a", () -> a.lead(resource,
        CampaignOptions.value("a").ttl(ttl), leading -> {
      aStarted.complete(new long[] {System.nanoTime(), leading.term()});
      beliefs.report(LEADERSHIP, leading);
      try {
        new CountDownLatch(1).await(); // until the leadership is lost
      } catch (InterruptedException lost) {
        aCancelled.complete(new long[] {System.nanoTime(), leading.deadlineNanos()});
        beliefs.end(LEADERSHIP);
      }
      return null;
    }));
    aStarted.get(10, TimeUnit.SECONDS);
    await("leading");
    CompletableFuture<Throwable> bEnded = inBackground("lead-b", () -> b.lead(resource,
        CampaignOptions.value("b").ttl(ttl), leading -> {
      bStarted.complete(new long[] {System.nanoTime(), leading.term()});
      return null;
    }));
    Thread.sleep(300);
    boolean bEarly = bStarted.isDone();
    await("freeze");
    Throwable aError = ended(aEnded);
    await("thaw");
    Throwable bError = ended(bEnded);
    JsonObject facts = new JsonObject();
    facts.addProperty("term_a", Long.toUnsignedString(aStarted.get()[1]));
    long[] cancelled = aCancelled.getNow(null);
    if (cancelled != null) {
      facts.addProperty("cancel_margin_ms", (cancelled[1] - cancelled[0]) / 1e6);
    }
    facts.add("a_error", aError instanceof LockServiceException e ? describe(e) : outcome(aError));
    facts.addProperty("b_early", bEarly);
    long[] startedB = bStarted.getNow(null);
    if (startedB != null) {
      if (cancelled != null) {
        facts.addProperty("b_after_a_ms", (startedB[0] - cancelled[0]) / 1e6);
      }
      facts.addProperty("term_b", Long.toUnsignedString(startedB[1]));
    }
    facts.add("b_result", bError == null ? new com.google.gson.JsonPrimitive("ok")
        : bError instanceof LockServiceException e ? describe(e) : outcome(bError));
    return facts;
  }

  /** Runs a call on a daemon thread of its own; the future has what it threw, or null once it returned. */
  private static CompletableFuture<Throwable> inBackground(String name, java.util.concurrent.Callable<?> call) {
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        call.call();
        ended.complete(null);
      } catch (Throwable e) {
        ended.complete(e);
      }
    }, name);
    t.setDaemon(true);
    t.start();
    return ended;
  }

  /** What a background call ended with, waiting up to 10 s; a TimeoutException when it has not ended. */
  private static Throwable ended(CompletableFuture<Throwable> call) throws InterruptedException {
    try {
      return call.get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return e;
    }
  }

  /** An outcome that is not the client's error, in the error form: the harness shows it when it fails. */
  private static com.google.gson.JsonElement outcome(Throwable t) {
    if (t == null) {
      return com.google.gson.JsonNull.INSTANCE;
    }
    JsonObject error = new JsonObject();
    error.addProperty("type", t.getClass().getSimpleName());
    error.addProperty("code", "");
    error.addProperty("message", t.toString());
    return error;
  }

  private JsonObject shutdownRace() throws Exception {
    Lease lease = client(Duration.ofSeconds(5)).acquire(resource, LockOptions.ttl(Duration.ofSeconds(2)));
    beliefs.report(LEASE, lease);
    AtomicInteger lost = new AtomicInteger();
    lease.keepAlive().onLost(e -> lost.incrementAndGet());
    JsonObject facts = new JsonObject();
    facts.addProperty("fencing_token", Long.toUnsignedString(lease.fencingToken()));
    await("held");
    facts.addProperty("valid", lease.isValid());
    facts.addProperty("fencing_token_after", Long.toUnsignedString(lease.fencingToken()));
    facts.addProperty("lost_calls", lost.get());
    beliefs.end(LEASE);
    facts.addProperty("released", lease.release());
    return facts;
  }

  private static <T> void awaitEvents(List<T> events, Predicate<List<T>> reached, Duration atMost)
      throws InterruptedException {
    long until = System.nanoTime() + atMost.toNanos();
    synchronized (events) {
      while (!reached.test(events) && System.nanoTime() < until) {
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
    ManagedChannel channel = Channels.forAddresses(server, InsecureChannelCredentials.create()).build();
    channels.add(channel);
    return LockClient.builder(channel).callTimeout(callTimeout).build();
  }

  private static void awaitReady(ManagedChannel channel) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (channel.getState(true) != ConnectivityState.READY && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }

  /** Tells the harness this point is reached and waits for its answer line. */
  private void await(String point) throws IOException {
    JsonObject event = new JsonObject();
    event.addProperty("event", "await");
    event.addProperty("name", point);
    emit(event);
    if (stdin.readLine() == null) {
      throw new IllegalStateException("the harness closed standard input at " + point);
    }
  }

  /** Prints one event as one line, flushed at once; lines from several threads never mix. */
  private static void emit(JsonObject event) {
    String line = GSON.toJson(event);
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  private static final String LEASE = "lease";
  private static final String LEADERSHIP = "leadership";

  /**
   * The belief oracle's input: every 20 ms, from a thread of its own, what the client believes
   * of each handle being reported (valid, remaining time); a handle's {@code belief-end} once,
   * before it is released or resigned, and no belief of it after that.
   */
  private static final class Beliefs {
    /** A handle is reported at least this many times (60 ms at most) before its belief-end. */
    private static final int AT_LEAST = 3;

    private static final class Handle {
      final BooleanSupplier valid;
      final Supplier<Duration> remaining;
      int reported;

      Handle(BooleanSupplier valid, Supplier<Duration> remaining) {
        this.valid = valid;
        this.remaining = remaining;
      }
    }

    private final Map<String, Handle> handles = new LinkedHashMap<>(); // guarded by this
    private ScheduledExecutorService reporter; // guarded by this

    void report(String name, Lease lease) {
      add(name, new Handle(lease::isValid, lease::remaining));
    }

    void report(String name, Leadership leadership) {
      add(name, new Handle(leadership::isLeader, leadership::remaining));
    }

    private synchronized void add(String name, Handle handle) {
      handles.put(name, handle);
      if (reporter == null) {
        reporter = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "beliefs");
          t.setDaemon(true);
          return t;
        });
        reporter.scheduleAtFixedRate(this::reportAll, 0, 20, TimeUnit.MILLISECONDS);
      } else {
        reportOne(name, handle);
      }
    }

    private synchronized void reportAll() {
      handles.forEach(this::reportOne);
    }

    private void reportOne(String name, Handle handle) {
      // CLOCK_MONOTONIC on Linux, before and after the remaining time: the client read its clock between.
      long before = System.nanoTime();
      boolean valid = handle.valid.getAsBoolean();
      double remainingMs = valid ? handle.remaining.get().toNanos() / 1e6 : 0;
      long after = System.nanoTime();
      JsonObject belief = new JsonObject();
      belief.addProperty("event", "belief");
      belief.addProperty("handle", name);
      belief.addProperty("valid", valid);
      belief.addProperty("remaining_ms", remainingMs);
      belief.addProperty("mono_ns", Long.toString(after));
      belief.addProperty("mono_before_ns", Long.toString(before));
      emit(belief);
      handle.reported++;
      notifyAll();
    }

    /**
     * Stops reporting this handle and says so; once this returns, no belief of it is printed. A
     * handle released right after it was made is reported a few times first, so that the
     * harness has something to judge.
     */
    synchronized void end(String name) {
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
      Handle handle = handles.get(name);
      while (handle != null && handle.reported < AT_LEAST && System.nanoTime() < until) {
        try {
          wait(5);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      if (handles.remove(name) != null) {
        JsonObject end = new JsonObject();
        end.addProperty("event", "belief-end");
        end.addProperty("handle", name);
        end.addProperty("mono_ns", Long.toString(System.nanoTime()));
        emit(end);
      }
    }

    synchronized void endAll() {
      for (String name : List.copyOf(handles.keySet())) {
        end(name);
      }
    }

    synchronized void stop() {
      if (reporter != null) {
        reporter.shutdownNow();
      }
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

  private static JsonObject describe(StatusRuntimeException e) {
    return error(e, e.getStatus());
  }

  private static JsonObject describe(LockServiceException e) {
    return error(e, e.status());
  }

  private static JsonObject error(RuntimeException e, io.grpc.Status status) {
    JsonObject error = new JsonObject();
    error.addProperty("type", e.getClass().getSimpleName());
    error.addProperty("code", status.getCode().name());
    error.addProperty("message", e.toString());
    return error;
  }
}
