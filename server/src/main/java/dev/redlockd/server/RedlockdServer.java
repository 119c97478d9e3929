package dev.redlockd.server;

import com.google.common.net.InetAddresses;
import dev.redlockd.election.Elections;
import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.DistinctInstances;
import dev.redlockd.node.InstanceIds;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisIo;
import dev.redlockd.node.RedisNode;
import dev.redlockd.node.ScriptBatch;
import dev.redlockd.server.access.Access;
import dev.redlockd.server.access.AccessControl;
import dev.redlockd.server.access.AuthInterceptor;
import dev.redlockd.server.access.PolicyWatch;
import dev.redlockd.server.access.LeaseDesk;
import dev.redlockd.server.access.Shares;
import dev.redlockd.server.dev.DevCluster;
import dev.redlockd.server.metrics.Metrics;
import dev.redlockd.server.rpc.Admission;
import dev.redlockd.server.rpc.ElectionServiceAdapter;
import dev.redlockd.server.rpc.LockServiceAdapter;
import dev.redlockd.server.rpc.OpenStreams;
import dev.redlockd.server.rpc.UnparseableRequests;
import dev.redlockd.server.tracing.NameFilter;
import dev.redlockd.server.tracing.Tracing;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running redlockd: the Redis nodes (started locally in dev mode), the engine, and the gRPC
 * server with the lock service, health and reflection. {@link #close()} is the graceful
 * shutdown and runs once.
 */
public final class RedlockdServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RedlockdServer.class);
  /** How often the redlockd clients ping a replica while a call is open (clients/conformance/README.md). */
  private static final Duration CLIENT_KEEPALIVE_TIME = Duration.ofSeconds(2);
  /** How often the open streams are looked at for a waiting candidate whose client is gone (OpenStreams#sweepEvery). */
  private static final Duration STREAM_SWEEP = Duration.ofSeconds(1);
  /** The longest a start waits for its warm-up ({@link WarmUp}) before it opens the port anyway. */
  private static final Duration WARM_UP_BOUND = Duration.ofSeconds(5);

  private final Server server;
  private final LockEngine engine;
  private final Elections elections;
  private final List<RedisNode> nodes;
  private final RedisIo redisIo;
  private final HealthStatusManager health;
  private final OpenStreams streams;
  private final DevCluster devCluster;
  private final Metrics metrics;
  private final PolicyWatch policyWatch; // null without a policy
  private final Tracing tracing;
  private final Duration shutdownGrace;
  private final WarmUp.Outcome warmedUp;
  private final AtomicBoolean closed = new AtomicBoolean();

  private RedlockdServer(Server server, LockEngine engine, Elections elections, List<RedisNode> nodes, RedisIo io,
      HealthStatusManager health, OpenStreams streams, DevCluster devCluster, Metrics metrics, PolicyWatch policyWatch,
      Tracing tracing, Duration shutdownGrace, WarmUp.Outcome warmedUp) {
    this.server = server;
    this.engine = engine;
    this.elections = elections;
    this.nodes = nodes;
    this.redisIo = io;
    this.health = health;
    this.streams = streams;
    this.devCluster = devCluster;
    this.metrics = metrics;
    this.policyWatch = policyWatch;
    this.tracing = tracing;
    this.shutdownGrace = shutdownGrace;
    this.warmedUp = warmedUp;
  }

  /**
   * Starts a server on the configured port over Netty. The gRPC calls run on the I/O threads
   * that talk to Redis, and the handlers run right there (nothing in them blocks): a call's
   * Redis round trips and its answer then take no hop to another thread.
   */
  public static RedlockdServer start(ServerConfig config) throws IOException {
    log.info("gRPC security: {}", config.grpcSecurity());
    // Before any thread is started: a bad OTEL_* setting stops start-up here, leaking nothing.
    Tracing tracing = Tracing.fromEnvironment(System.getenv(), System.getProperties());
    if (config.permitKeepAliveTime.compareTo(CLIENT_KEEPALIVE_TIME) > 0) {
      log.warn("--permit-keepalive-time {} is above the {} the redlockd clients ping at: their connections will be "
          + "closed (GOAWAY too_many_pings)", DurationFlag.format(config.permitKeepAliveTime),
          DurationFlag.format(CLIENT_KEEPALIVE_TIME));
    }
    RedisIo io = RedisIo.start(config.ioThreadCount());
    return start(config, io, tracing, true, NettyServerBuilder.forAddress(
        new InetSocketAddress(config.bindAddress(), config.port), config.grpcCredentials())
        .bossEventLoopGroup(io.group())
        .workerEventLoopGroup(io.group())
        .channelType(io.serverChannelType())
        .directExecutor()
        // A holder lost to a power cut or a partition sends no FIN: without pings its
        // KeepAlive stream would be renewed until TCP gives up, about 15 minutes.
        .keepAliveTime(config.keepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
        .keepAliveTimeout(config.keepAliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
        // Clients may ping too, to notice a replica that went silent without closing its
        // connections (the redlockd clients ping every 2 s while a call is open).
        .permitKeepAliveTime(config.permitKeepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
        .permitKeepAliveWithoutCalls(true)
        // Room for an oversized bearer header to reach the access check, which answers it
        // UNAUTHENTICATED; past grpc-java's 8 KiB default the transport answers HTTP 431 itself.
        .maxInboundMetadataSize(AuthInterceptor.MAX_METADATA_BYTES));
  }

  /** Starts a server on the given builder (tests pass in-process ones). */
  public static RedlockdServer start(ServerConfig config, ServerBuilder<?> builder) throws IOException {
    return start(config, builder, Tracing.off());
  }

  /**
   * Starts a server on the given builder, its calls traced by {@code tracing} (closed with the
   * server). No warm-up ({@link WarmUp}): its transport is the caller's, not the one it would warm.
   */
  public static RedlockdServer start(ServerConfig config, ServerBuilder<?> builder, Tracing tracing)
      throws IOException {
    return start(config, RedisIo.start(config.ioThreadCount()), tracing, false, builder);
  }

  private static RedlockdServer start(ServerConfig config, RedisIo io, Tracing tracing, boolean warm,
      ServerBuilder<?> builder)
      throws IOException {
    EngineConfig engineConfig = config.engineConfig();
    Optional<AccessControl> control = config.accessControl();
    if (control.isPresent()) {
      log.info("access control: {}", control.get().describe());
    } else {
      log.warn("access control: OPEN, no --policy given: every caller that reaches the port may lock, describe "
          + "and wait on every resource");
    }
    DevCluster dev = null;
    String redis = config.redis;
    if (config.devMode()) {
      dev = DevCluster.start(config.devNodes);
      redis = String.join(",", dev.uris());
      log.warn("==================================================================");
      log.warn("DEV MODE (--dev): started {} local Redis nodes ({}): {}", config.devNodes,
          dev.binaryDescription(), redis);
      log.warn("They keep nothing on disk and stop with this server. Not for production.");
      if (control.isEmpty()) {
        log.warn("Access control is OPEN: whoever reaches the port may lock, describe and wait on anything; it "
            + "listens on {}", listening(config.bindAddress()));
      } else {
        log.warn("It listens on {}", listening(config.bindAddress()));
      }
      log.warn("==================================================================");
    }
    List<RedisNode> nodes = new ArrayList<>();
    LockEngine engine = null;
    Elections elections = null;
    Metrics metrics = config.metricsPort == 0 ? Metrics.off() : Metrics.on(System::nanoTime);
    PolicyWatch watch = null;
    try {
      SSLContext redisTls = config.redisTls().orElse(null);
      NodeLists lists = dev != null ? NodeLists.parse(redis, null) : config.nodeLists();
      List<NodeAddress> addresses = lists.nodes();
      InstanceIds identities = new InstanceIds(); // one Redis instance never votes as two nodes
      for (NodeAddress address : addresses) {
        nodes.add(metrics.meter(new NettyRedisNode(address, config.nodeTimeout, io, redisTls, identities,
            config.batchScripts ? LockEngine.scriptBatch() : ScriptBatch.NONE)));
      }
      DistinctInstances.check(nodes);
      // NodeAddress prints the scheme (is it TLS?) and never the password.
      int perResource = LockEngine.nodesPerResource(lists.old().size(), config.nodesPerResource);
      if (lists.next().isPresent()) {
        log.warn("MEMBERSHIP CHANGE under way: every grant and renewal needs a quorum of each resource's set "
            + "under --redis {} and of its set under --redis-next {} ({} of each list's nodes per resource)",
            lists.old(), lists.next().get(), config.nodesPerResource == 0 ? "all" : config.nodesPerResource);
      }
      if (perResource == lists.old().size()) {
        log.info("Redlock over {} Redis nodes (quorum {}): {}; {}", nodes.size(), nodes.size() / 2 + 1, addresses,
            io.transport());
      } else {
        log.info("Redlock over {} Redis nodes, each resource on {} of them (quorum {}): {}; {}", nodes.size(),
            perResource, perResource / 2 + 1, addresses, io.transport());
      }
      if (nodes.size() < 3) {
        log.warn("{} Redis node{}: quorum {} of {}, the service stops if any one node fails; use 3 or more",
            nodes.size(), nodes.size() == 1 ? "" : "s", nodes.size() / 2 + 1, nodes.size());
      }
      LockEngine.Builder building = LockEngine.builder(nodes, engineConfig).notices(config.notifyWaiters)
          .nodeIds(lists.ids());
      lists.next().ifPresent(next -> building.membership(lists.old(), next));
      engine = building.nodesPerResource(config.nodesPerResource).recordMembership(lists.named(), Duration.ofSeconds(1))
          .build().start();
      StartupGate.awaitNodes(engine, StartupGate.MAX_WAIT);
      if (lists.named()) {
        engine.checkMembership(); // refuses, with one line, to break a membership change the nodes show
      }
      HealthStatusManager health = new HealthStatusManager();
      new HealthPublisher(health, engine);
      OpenStreams streams = new OpenStreams(config.maxStreams, metrics.leases());
      streams.quorumFrom(engine::quorumAvailable);
      streams.sweepEvery(io.group(), STREAM_SWEEP);
      elections = new Elections(engine);
      metrics.watch(engine, streams::size, streams::byKind, config.nodeTimeout);
      metrics.serve(config.bindAddress(), config.metricsPort);
      Access access = control.map(c -> new Access(c, metrics)).orElseGet(Access::open);
      watch = control.map(c -> PolicyWatch.start(c, Duration.ofSeconds(1))).orElse(null);
      AuthInterceptor auth = new AuthInterceptor(access);
      Shares shares = new Shares(access);
      NameFilter hidden = control.<NameFilter>map(c -> name -> c.current().policy().nameIsSensitive(name))
          .orElse(NameFilter.NONE);
      log.info("tracing: {}", tracing.describe());
      WarmUp.Outcome warmedUp = warm ? warmUp(config, engine, io) : WarmUp.Outcome.NONE;
      Server server = builder
          // Metered outside the refusal, so refused requests count with their INVALID_ARGUMENT; the
          // policy inside it, so that it judges only requests that parsed. Traced outermost, so that
          // every call has its span, refused ones too.
          .addService(tracing.trace(metrics.meter(UnparseableRequests.refuse(ServerInterceptors.intercept(
              new LockServiceAdapter(engine, streams, access, new LeaseDesk(engine, shares),
                  config.allowForceRelease, admission(config, engine, metrics)).bind(),
              auth))), hidden))
          .addService(tracing.trace(metrics.meter(UnparseableRequests.refuse(ServerInterceptors.intercept(
              new ElectionServiceAdapter(elections, streams, access, shares).bindService(),
              auth))), hidden))
          .addService(health.getHealthService())
          .addService(ProtoReflectionServiceV1.newInstance())
          .addService(olderReflection())
          .build()
          .start();
      if (config.allowForceRelease && control.isEmpty()) {
        log.warn("ForceRelease is enabled (--allow-force-release): any caller that reaches this port can "
            + "delete any lock");
      } else if (config.allowForceRelease) {
        log.warn("ForceRelease is enabled (--allow-force-release) for the identities the policy grants "
            + "force_release prefixes");
      }
      if (server.getPort() >= 0) {
        log.info("redlockd listening on port {}", server.getPort());
      } else {
        log.info("redlockd listening on {} (no TCP port)", server.getListenSockets());
      }
      return new RedlockdServer(server, engine, elections, nodes, io, health, streams, dev, metrics, watch,
          tracing, config.shutdownGrace, warmedUp);
    } catch (IOException | RuntimeException e) {
      if (watch != null) {
        watch.close();
      }
      metrics.close();
      tracing.close();
      if (elections != null) {
        elections.close();
      }
      if (engine != null) {
        engine.close();
      }
      nodes.forEach(RedisNode::close);
      io.close();
      if (dev != null) {
        dev.close();
      }
      throw e;
    }
  }

  /**
   * The scratch leases run through the lock service before the port opens ({@link WarmUp}):
   * the service as it is served, minus metrics, tracing and the access check, so that they count
   * as nobody's calls. Not without a quorum: its rounds would only fail.
   */
  private static WarmUp.Outcome warmUp(ServerConfig config, LockEngine engine, RedisIo io) {
    if (config.warmUp <= 0) {
      return WarmUp.Outcome.NONE;
    }
    if (!engine.quorumAvailable()) {
      log.info("no warm-up: no quorum of Redis nodes answers yet");
      return WarmUp.Outcome.NONE;
    }
    OpenStreams scratch = new OpenStreams(config.maxStreams);
    scratch.quorumFrom(engine::quorumAvailable);
    Access open = Access.open();
    return WarmUp.run(UnparseableRequests.refuse(new LockServiceAdapter(engine, scratch, open,
        new LeaseDesk(engine, new Shares(open)), false).bind()), io, config.warmUp, WARM_UP_BOUND);
  }

  /** Where dev mode's banner says the server listens: on this machine only, unless --bind said otherwise. */
  private static String listening(InetAddress bind) {
    String address = InetAddresses.toAddrString(bind);
    if (bind.isLoopbackAddress()) {
      return address + ", this machine only (--bind to serve others)";
    }
    return address + (bind.isAnyLocalAddress() ? ", every interface" : "") + ": other machines can reach it";
  }

  /** New Acquire calls and KeepAlive streams refused early while the engine's rounds run later than the bound. */
  private static Admission admission(ServerConfig config, LockEngine engine, Metrics metrics) {
    Duration bound = config.admissionBound();
    if (bound.isZero()) {
      log.info("admission control: off (--admission-latency 0)");
    }
    return new Admission(engine.backlog()::lateness, bound, config.nodeTimeout, new java.util.Random(),
        metrics::admissionRefused);
  }

  /** grpcurl before 1.8.8 speaks only the v1alpha reflection protocol. */
  @SuppressWarnings("deprecation")
  private static io.grpc.BindableService olderReflection() {
    return io.grpc.protobuf.services.ProtoReflectionService.newInstance();
  }

  /**
   * The TCP port the gRPC server listens on.
   *
   * @throws IllegalStateException for a server that has none (one started on an in-process
   *     builder), rather than a -1 that a caller would make an address of
   */
  public int port() {
    int port = server.getPort();
    if (port < 0) {
      throw new IllegalStateException("the gRPC server listens on no TCP port: " + server.getListenSockets());
    }
    return port;
  }

  /** What the warm-up before the port opened did; {@code leases} 0 when there was none. */
  public WarmUp.Outcome warmedUp() {
    return warmedUp;
  }

  /** The port /metrics is served on; 0 when metrics are off. */
  public int metricsPort() {
    return metrics.port();
  }

  public LockEngine engine() {
    return engine;
  }

  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /** Open KeepAlive, Campaign and Observe streams. */
  public int openStreams() {
    return streams.size();
  }

  /**
   * Graceful shutdown: health says NOT_SERVING, no new calls, every open stream ends with
   * UNAVAILABLE and nothing it holds is released (its holder may still believe it valid, and
   * resumes it through another replica), calls under way get the grace period, then the engine and the node connections close (and dev-mode Redis nodes stop).
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    log.info("redlockd shutting down");
    if (policyWatch != null) {
      policyWatch.close();
    }
    health.enterTerminalState();
    server.shutdown();
    String ended = streams.describe(); // no new ones: the server takes no new calls
    boolean finished = true;
    try {
      // In waves (OpenStreams#shutdown), on the I/O threads, which run until the engine closes below.
      streams.shutdown(redisIo.group(), shutdownGrace).get(shutdownGrace.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      log.warn("not every open stream could be ended before shutdown: {}", e.toString());
    }
    try {
      if (!server.awaitTermination(shutdownGrace.toMillis(), TimeUnit.MILLISECONDS)) {
        finished = false;
        server.shutdownNow();
        server.awaitTermination(1, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      finished = false;
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    String grace = DurationFlag.format(shutdownGrace);
    log.info("shutdown: ended {} streams with UNAVAILABLE, releasing nothing they held; {}", ended, finished
        ? "calls under way finished within the " + grace + " grace period"
        : "calls still under way were cut off when the " + grace + " grace period ran out");
    elections.close();
    engine.close();
    nodes.forEach(RedisNode::close);
    redisIo.close();
    if (devCluster != null) {
      devCluster.close();
    }
    metrics.close();
    tracing.close(); // after the last calls: their spans are exported
    log.info("redlockd stopped");
  }
}
