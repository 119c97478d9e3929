package dev.redlockd.server;

import com.google.protobuf.Duration;
import dev.redlockd.node.RedisIo;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Before a replica opens its port, it runs a few hundred leases through its own lock service,
 * on a loopback port of its own and on the same I/O threads: Acquire, then either a KeepAlive
 * stream with a few renewals that ends in a release, or Extend and Release, each on a scratch
 * resource of its own. Why: a replica that listens with cold code spends many times the CPU per
 * call of a warm one (bytecode interpreted, classes still loading), and the holders whose
 * replica just stopped all resume through it at once. On a busy host its first renewals then
 * missed the node timeout while the warm replicas beside it missed none (a rolling restart of
 * three replicas on two cores, docs/reliability.md), the holders took it for silent and moved on,
 * and the streams piled onto the one replica never restarted, which the next restart then
 * moved at once. Warmed, the code those calls run is compiled before the first holder arrives,
 * and a rollout paced by readiness waits for it, since the port opens only afterwards.
 *
 * <p>The scratch leases are real ones on the real nodes: their keys live a ttl at most, every
 * lease is released, and their resources are drawn at random, so no two replicas starting at
 * once contend. They are not metered as calls or streams (the service here has no metrics,
 * tracing or access check in front), but their node requests count in the node metrics, as the
 * requests they are. Failures are only counted: a warm-up never stops a start, and it ends at its
 * time bound whatever it has done by then.
 *
 * <p>The loopback port has no access check in front, so it takes only calls that carry this
 * start's random secret ({@link #SECRET}): another process on the host cannot use the seconds it
 * is open to lock past the access policy.
 */
public final class WarmUp {
  /** What a warm-up did: scratch leases taken and released, renewals answered on their streams, calls that failed. */
  public record Outcome(int leases, int renewals, int failed, long millis) {
    static final Outcome NONE = new Outcome(0, 0, 0, 0);
  }

  private static final Logger log = LoggerFactory.getLogger(WarmUp.class);
  /** The header the warm-up's own calls carry this start's secret in. */
  static final Metadata.Key<String> SECRET = Metadata.Key.of("redlockd-warm-up", Metadata.ASCII_STRING_MARSHALLER);
  /** Leases in flight at once: enough to fill a renewal batch and keep every I/O thread busy. */
  static final int PARALLEL = 16;
  /** Renewals on each kept stream, after the first answer. */
  static final int RENEWALS = 4;
  /** Long enough to outlive the warm-up; short, so a lease left behind by a failed call runs out soon. */
  private static final Duration TTL = Duration.newBuilder().setSeconds(3).build();

  private final ServerServiceDefinition service;
  private final RedisIo io;
  private final int leases;
  private final java.time.Duration bound;
  private final String prefix;
  private final String secret;
  private final AtomicInteger next = new AtomicInteger();
  private final AtomicInteger done = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();
  private final AtomicInteger renewed = new AtomicInteger();

  private WarmUp(ServerServiceDefinition service, RedisIo io, int leases, java.time.Duration bound) {
    this.service = service;
    this.io = io;
    this.leases = leases;
    this.bound = bound;
    SecureRandom random = new SecureRandom();
    byte[] id = new byte[6];
    random.nextBytes(id);
    this.prefix = "redlockd-warm-up/" + HexFormat.of().formatHex(id) + "/";
    byte[] key = new byte[16];
    random.nextBytes(key);
    this.secret = HexFormat.of().formatHex(key);
  }

  /**
   * Runs {@code leases} scratch leases through {@code service} (the lock service as this replica
   * serves it, minus metrics, tracing and access control), within {@code bound}.
   */
  static Outcome run(ServerServiceDefinition service, RedisIo io, int leases, java.time.Duration bound) {
    if (leases <= 0) {
      return Outcome.NONE;
    }
    return new WarmUp(service, io, leases, bound).run();
  }

  private Outcome run() {
    long began = System.nanoTime();
    long deadline = began + bound.toNanos();
    Server server = null;
    ManagedChannel channel = null;
    ExecutorService workers = Executors.newFixedThreadPool(PARALLEL, r -> {
      Thread t = new Thread(r, "warm-up");
      t.setDaemon(true);
      return t;
    });
    try {
      InetAddress loopback = InetAddress.getLoopbackAddress();
      server = NettyServerBuilder.forAddress(new InetSocketAddress(loopback, 0))
          .bossEventLoopGroup(io.group())
          .workerEventLoopGroup(io.group())
          .channelType(io.serverChannelType())
          .directExecutor()
          .addService(ServerInterceptors.intercept(service, new SecretCheck(secret)))
          .build()
          .start();
      Metadata carried = new Metadata();
      carried.put(SECRET, secret);
      channel = NettyChannelBuilder.forAddress(new InetSocketAddress(loopback, server.getPort()))
          .intercept(MetadataUtils.newAttachHeadersInterceptor(carried))
          .eventLoopGroup(io.group())
          .channelType(io.channelType())
          .usePlaintext()
          .directExecutor()
          .build();
      ManagedChannel ch = channel;
      for (int i = 0; i < PARALLEL; i++) {
        workers.execute(() -> work(ch, deadline));
      }
      workers.shutdown();
      if (!workers.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        log.info("warm-up stopped at its bound ({} ms) with {} of {} leases begun", bound.toMillis(),
            Math.min(next.get(), leases), leases);
      }
    } catch (IOException e) {
      log.info("no warm-up: could not listen on a loopback port ({})", e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      workers.shutdownNow();
      if (channel != null) {
        channel.shutdownNow();
      }
      if (server != null) {
        server.shutdownNow();
      }
    }
    Outcome outcome = new Outcome(done.get(), renewed.get(), failed.get(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
    log.info("warmed up in {} ms: {} scratch leases, {} renewals, {} calls failed", outcome.millis(),
        outcome.leases(), outcome.renewals(), outcome.failed());
    return outcome;
  }

  /** One worker: leases one after another until they are all taken, the bound passes, or calls keep failing. */
  private void work(ManagedChannel channel, long deadline) {
    int i;
    while ((i = next.getAndIncrement()) < leases && System.nanoTime() < deadline
        && failed.get() <= Math.max(PARALLEL, leases / 4)) {
      try {
        if (lease(channel, prefix + i, i % 2 == 0, deadline)) {
          done.incrementAndGet();
        }
      } catch (StatusRuntimeException | InterruptedException e) {
        failed.incrementAndGet();
        if (e instanceof InterruptedException) {
          return;
        }
      }
    }
  }

  /** One scratch lease, start to release; false when its stream failed (counted there). */
  private boolean lease(ManagedChannel channel, String resource, boolean kept, long deadline)
      throws InterruptedException {
    LockServiceGrpc.LockServiceBlockingStub calls = LockServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    Lease lease = calls.acquire(AcquireRequest.newBuilder().setResource(resource).setTtl(TTL)
        .setOwner("redlockd warm-up").build()).getLease();
    if (kept) {
      return keep(channel, lease, deadline);
    }
    calls.extend(ExtendRequest.newBuilder().setResource(resource).setToken(lease.getToken()).setTtl(TTL).build());
    calls.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build());
    return true;
  }

  /**
   * A KeepAlive stream: the first answer, {@link #RENEWALS} renewals, then a half-close, which
   * releases; false, with the failure counted, when an answer or the stream's end did not come.
   */
  private boolean keep(ManagedChannel channel, Lease lease, long deadline) throws InterruptedException {
    LinkedBlockingQueue<Object> answers = new LinkedBlockingQueue<>();
    StreamObserver<KeepAliveRequest> requests = LockServiceGrpc.newStub(channel)
        .withDeadlineAfter(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
        .keepAlive(new StreamObserver<>() {
          @Override
          public void onNext(KeepAliveResponse answer) {
            answers.add(answer);
          }

          @Override
          public void onError(Throwable t) {
            answers.add(t);
          }

          @Override
          public void onCompleted() {
            answers.add(Boolean.TRUE);
          }
        });
    for (int sequence = 1; sequence <= RENEWALS + 1; sequence++) {
      requests.onNext(KeepAliveRequest.newBuilder().setResource(lease.getResource()).setToken(lease.getToken())
          .setTtl(TTL).setSequence(sequence).build());
      Object answer = answers.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (!(answer instanceof KeepAliveResponse)) {
        failed.incrementAndGet();
        if (answer == null) {
          requests.onError(new IllegalStateException("warm-up bound")); // cancels; the lease runs out at its ttl
        }
        return false;
      }
      if (sequence > 1) {
        renewed.incrementAndGet();
      }
    }
    requests.onCompleted();
    Object end;
    while ((end = answers.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS))
        instanceof KeepAliveResponse) {
      // a renewal's answer still on its way; the stream's end follows it
    }
    if (!Boolean.TRUE.equals(end)) {
      failed.incrementAndGet();
      return false;
    }
    return true;
  }

  /** Ends at once, UNAUTHENTICATED, every call without this start's secret. */
  static final class SecretCheck implements ServerInterceptor {
    private final byte[] secret;

    SecretCheck(String secret) {
      this.secret = secret.getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
        ServerCallHandler<Q, A> next) {
      String given = headers.get(SECRET);
      if (given == null || !MessageDigest.isEqual(secret, given.getBytes(StandardCharsets.US_ASCII))) {
        call.close(Status.UNAUTHENTICATED.withDescription("this port serves only the server's own warm-up"),
            new Metadata());
        return new ServerCall.Listener<>() { };
      }
      return next.startCall(call, headers);
    }
  }
}
