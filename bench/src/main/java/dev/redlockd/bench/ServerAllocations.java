package dev.redlockd.bench;

import dev.redlockd.client.LockTokens;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.server.dev.DevCluster;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Bytes the server allocates per lock cycle (Acquire then Release) and per KeepAlive renewal:
 * unlike CPU time, a figure that other work on a shared machine does not disturb. The real
 * server runs in this JVM against 5 real redis-server nodes; its threads (every thread named
 * redlockd-*: the I/O loops that serve gRPC and talk to Redis, the engine's scheduler) are
 * told apart from the load generator's by name, and their allocated bytes read from
 * {@link com.sun.management.ThreadMXBean}. The client is grpc-netty-shaded on its own event
 * loop thread, so none of its work lands on a server thread.
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.ServerAllocations
 *     [--cycles 20000] [--in-flight 32] [--rounds 3] [--streams 500] [--ttl-ms 600] [--renew-seconds 5]
 *     [--metrics] [--server-flags "--node-timeout 1s"]</pre>
 *
 * <p>{@code --cycles 0} or {@code --streams 0} leaves that part out, e.g. to profile the other alone.
 *
 * <p>Each figure is measured after a warm-up as long as one round (C2's escape analysis
 * removes some allocations only once the hot path is compiled), over several rounds, so that
 * their spread shows how repeatable it is. For where the bytes come from, run it with
 * {@code -XX:StartFlightRecording=settings=profile,filename=alloc.jfr} and read
 * {@code jfr print --events jdk.ObjectAllocationSample alloc.jfr}.
 */
public final class ServerAllocations {
  private static final String SERVER_THREADS = "redlockd-";
  private static final com.google.protobuf.Duration CYCLE_TTL = com.google.protobuf.Duration.newBuilder()
      .setSeconds(10).build();

  private int cycles = 20_000;
  private int inFlight = 32;
  private int rounds = 3;
  private int streams = 500;
  private long ttlMs = 600;
  private int renewSeconds = 5;
  private boolean metrics;
  /** A node timeout far above the default: on a busy machine the default's misses would fail cycles. */
  private String serverFlags = "--node-timeout 1s";

  private final com.sun.management.ThreadMXBean threads =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  public static void main(String[] args) throws Exception {
    ServerAllocations probe = new ServerAllocations();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (flag.equals("--metrics")) {
        probe.metrics = true;
        continue;
      }
      String value = args[++i];
      switch (flag) {
        case "--cycles" -> probe.cycles = Integer.parseInt(value);
        case "--in-flight" -> probe.inFlight = Integer.parseInt(value);
        case "--rounds" -> probe.rounds = Integer.parseInt(value);
        case "--streams" -> probe.streams = Integer.parseInt(value);
        case "--ttl-ms" -> probe.ttlMs = Long.parseLong(value);
        case "--renew-seconds" -> probe.renewSeconds = Integer.parseInt(value);
        case "--server-flags" -> probe.serverFlags = value;
        default -> throw new IllegalArgumentException("unknown flag " + flag);
      }
    }
    probe.run();
    System.exit(0);
  }

  private void run() throws Exception {
    System.out.printf("load average %s; %d cycles per round, %d in flight; %d KeepAlive streams, ttl %d ms%s%n",
        Machine.loadAverage(), cycles, inFlight, streams, ttlMs, metrics ? "; metrics on" : "");
    NioEventLoopGroup clientLoop = new NioEventLoopGroup(1, new DefaultThreadFactory("alloc-client", true));
    try (DevCluster cluster = DevCluster.start(5); RedlockdServer server = RedlockdServer.start(config(cluster))) {
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
          .eventLoopGroup(clientLoop).channelType(NioSocketChannel.class).directExecutor().build();
      try {
        LockServiceGrpc.LockServiceStub stub = LockServiceGrpc.newStub(channel);
        if (cycles > 0) {
          System.out.printf("warm-up: %d cycles failed%n", cycles(stub, cycles));
        }
        for (int round = 1; round <= rounds && cycles > 0; round++) {
          long before = serverBytes();
          long failed = cycles(stub, cycles);
          long bytes = serverBytes() - before;
          System.out.printf(Locale.ROOT, "round %d: %,d bytes per Acquire+Release cycle (%d failed)%n", round,
              bytes / cycles, failed);
        }
        if (streams > 0) {
          renewals(stub);
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    } finally {
      clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  private ServerConfig config(DevCluster cluster) throws java.io.IOException {
    List<String> args = new ArrayList<>(List.of("--bind", "127.0.0.1", "--port", "0",
        "--redis", String.join(",", cluster.uris()), "--max-streams", Integer.toString(streams * 2 + 10)));
    if (metrics) {
      args.addAll(List.of("--metrics-port", Integer.toString(PortProbe.free())));
    }
    if (!serverFlags.isBlank()) {
      args.addAll(List.of(serverFlags.trim().split("\\s+")));
    }
    return ServerConfig.parse(args.toArray(String[]::new));
  }

  /** Bytes allocated so far by the live threads named redlockd-*. */
  private long serverBytes() {
    long total = 0;
    for (var info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && info.getThreadName().startsWith(SERVER_THREADS)) {
        long bytes = threads.getThreadAllocatedBytes(info.getThreadId());
        if (bytes > 0) {
          total += bytes;
        }
      }
    }
    return total;
  }

  /**
   * {@code count} cycles, {@code inFlight} at a time, each on its own resource with a fresh
   * token; returns how many failed (a failure's path allocates otherwise, so it is shown).
   */
  private long cycles(LockServiceGrpc.LockServiceStub stub, int count) throws InterruptedException {
    AtomicLong started = new AtomicLong();
    CountDownLatch done = new CountDownLatch(inFlight);
    AtomicLong failed = new AtomicLong();
    for (int slot = 0; slot < inFlight; slot++) {
      String resource = "alloc:" + slot;
      loop(stub, resource, started, count, done, failed);
    }
    if (!done.await(5, TimeUnit.MINUTES)) {
      throw new IllegalStateException("cycles did not finish in 5 minutes");
    }
    return failed.get();
  }

  private void loop(LockServiceGrpc.LockServiceStub stub, String resource, AtomicLong started, int count,
      CountDownLatch done, AtomicLong failed) {
    if (started.getAndIncrement() >= count) {
      done.countDown();
      return;
    }
    LockServiceGrpc.LockServiceStub call = stub.withDeadlineAfter(10, TimeUnit.SECONDS);
    String token = LockTokens.newToken();
    GrpcChannels.unary(call::acquire,
            AcquireRequest.newBuilder().setResource(resource).setTtl(CYCLE_TTL).setToken(token).build())
        .thenCompose(granted -> GrpcChannels.unary(call::release,
            dev.redlockd.proto.v1.ReleaseRequest.newBuilder().setResource(resource).setToken(token).build()))
        .whenComplete((released, error) -> {
          if (error == null && !released.getReleased()) {
            error = new IllegalStateException("released=false for " + resource);
          }
          if (error != null && failed.getAndIncrement() == 0) {
            System.out.println("first failure: " + error);
          }
          loop(stub, resource, started, count, done, failed);
        });
  }

  private static final java.util.concurrent.ScheduledExecutorService ASKS =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "keepalive-asks");
        t.setDaemon(true);
        return t;
      });

  /** Opens the streams, lets the renewals settle, then measures bytes per HELD renewal. */
  private void renewals(LockServiceGrpc.LockServiceStub stub) throws Exception {
    AtomicLong held = new AtomicLong();
    AtomicLong other = new AtomicLong();
    com.google.protobuf.Duration ttl = com.google.protobuf.Duration.newBuilder()
        .setSeconds(ttlMs / 1000).setNanos((int) (ttlMs % 1000) * 1_000_000).build();
    List<ClientCallStreamObserver<KeepAliveRequest>> open = new ArrayList<>();
    List<java.util.concurrent.ScheduledFuture<?>> asks = new ArrayList<>();
    List<CompletableFuture<Void>> first = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      String resource = "alloc-kept:" + i;
      AcquireResponse granted = blockingAcquire(stub, AcquireRequest.newBuilder().setResource(resource).setTtl(ttl)
          .setToken(LockTokens.newToken()).build());
      CompletableFuture<Void> answered = new CompletableFuture<>();
      first.add(answered);
      AtomicReference<ClientCallStreamObserver<KeepAliveRequest>> requests = new AtomicReference<>();
      stub.keepAlive(new ClientResponseObserver<KeepAliveRequest, KeepAliveResponse>() {
        @Override
        public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> stream) {
          requests.set(stream);
        }

        @Override
        public void onNext(KeepAliveResponse response) {
          (response.getState() == LeaseState.LEASE_STATE_HELD ? held : other).incrementAndGet();
          answered.complete(null);
        }

        @Override
        public void onError(Throwable t) {
          other.incrementAndGet();
          answered.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {}
      });
      KeepAliveRequest keep = KeepAliveRequest.newBuilder().setResource(resource)
          .setToken(granted.getLease().getToken()).setTtl(ttl).build();
      ClientCallStreamObserver<KeepAliveRequest> stream = requests.get();
      stream.onNext(keep);
      open.add(stream);
      // A request every ttl/4, as the clients send them: a stream silent for longer than its ttl
      // is taken for a client that is gone, and no longer renewed.
      AtomicLong sequence = new AtomicLong();
      asks.add(ASKS.scheduleAtFixedRate(() -> {
        synchronized (stream) {
          stream.onNext(keep.toBuilder().setSequence(sequence.incrementAndGet()).build());
        }
      }, ttlMs / 4, ttlMs / 4, TimeUnit.MILLISECONDS));
    }
    CompletableFuture.allOf(first.toArray(CompletableFuture[]::new)).get(1, TimeUnit.MINUTES);
    Thread.sleep(Math.max(2 * ttlMs, 2000)); // past the first renewals, and C2 at work on them
    for (int round = 1; round <= rounds; round++) {
      long heldBefore = held.get();
      long otherBefore = other.get();
      long before = serverBytes();
      Thread.sleep(TimeUnit.SECONDS.toMillis(renewSeconds));
      long bytes = serverBytes() - before;
      long renewed = held.get() - heldBefore;
      System.out.printf(Locale.ROOT, "round %d: %,d bytes per KeepAlive renewal (%,d renewals, %d not HELD)%n",
          round, renewed == 0 ? 0 : bytes / renewed, renewed, other.get() - otherBefore);
    }
    asks.forEach(ask -> ask.cancel(false));
    for (ClientCallStreamObserver<KeepAliveRequest> stream : open) {
      synchronized (stream) {
        stream.onCompleted();
      }
    }
  }

  private static AcquireResponse blockingAcquire(LockServiceGrpc.LockServiceStub stub, AcquireRequest request)
      throws Exception {
    return GrpcChannels.unary(stub.withDeadlineAfter(10, TimeUnit.SECONDS)::acquire, request).get(15, TimeUnit.SECONDS);
  }

  /** A free TCP port for /metrics. */
  private static final class PortProbe {
    static int free() throws java.io.IOException {
      try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
        return socket.getLocalPort();
      }
    }
  }
}
