package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.redlockd.node.InstanceIds;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisIo;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.SteppedClocks;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.LoggerFactory;

/**
 * What the clock-step tests share: five real redis-server nodes A..E whose clocks they step
 * ({@link SteppedClocks}), replicas over them, the clock watch's log, and a holder placed on
 * exactly {A, B, E} by making C and D refuse writes (maxmemory 1 with noeviction) during its
 * Acquire, as in the reproduction. It uses only what the engine had before the clock
 * watch, so that {@link ClockStepReproductionTest} also runs on a checkout from before it.
 */
final class SteppedNodes implements AutoCloseable {
  static final int A = 0;
  static final int C = 2;
  static final int D = 3;
  static final int E = 4;
  static final Duration TTL = Duration.ofSeconds(20);
  static final Duration STEP = Duration.ofSeconds(30);
  /** Roomy: the machine may be loaded, and no claim here rests on the node timeout. */
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

  final SteppedClocks clocks = SteppedClocks.start(5);
  private final List<LockEngine> engines = new ArrayList<>();
  private final List<RedisNode> nodes = new ArrayList<>();
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  /** By name: the class is new with the clock watch, and the reproduction also runs without it. */
  private final Logger watchLog = (Logger) LoggerFactory.getLogger("dev.redlockd.engine.ClockWatch");

  /** Before each test: empty nodes, and a fresh log. */
  void reset() throws IOException {
    for (int i = 0; i < clocks.size(); i++) {
      clocks.call(i, "FLUSHALL");
    }
    log.list.clear();
    log.start();
    watchLog.addAppender(log);
  }

  /** After each test: its replicas gone, every node taking writes. */
  void stopReplicas() throws IOException {
    watchLog.detachAppender(log);
    engines.forEach(LockEngine::close);
    engines.clear();
    nodes.forEach(RedisNode::close);
    nodes.clear();
    for (int i = 0; i < clocks.size(); i++) {
      clocks.call(i, "CONFIG", "SET", "maxmemory", "0");
    }
  }

  /**
   * A replica of its own over the nodes, started. {@code probeEvery}: a long one leaves every
   * check to the rounds themselves (and the probes they ask for), as between two probes.
   */
  LockEngine replica(Duration probeEvery) {
    return replica(probeEvery, null);
  }

  /** {@link #replica(Duration)} on the given scheduler (null: the engine's own). */
  LockEngine replica(Duration probeEvery, ScheduledExecutorService scheduler) {
    List<RedisNode> own = clocks.uris().stream()
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), NODE_TIMEOUT, RedisIo.shared(), null,
            new InstanceIds(), LockEngine.scriptBatch()))
        .toList();
    nodes.addAll(own);
    LockEngine.Builder builder = LockEngine.builder(own, EngineHarness.testConfig().withProbeInterval(probeEvery));
    if (scheduler != null) {
      builder.scheduler(scheduler);
    }
    LockEngine engine = builder.build().start();
    engines.add(engine);
    return engine;
  }

  /** Granted on exactly {A, B, E}: C and D refuse writes while the holder acquires. */
  Grant holderOnABE(LockEngine engine, String resource) throws IOException {
    for (int node : new int[] {C, D}) {
      clocks.call(node, "CONFIG", "SET", "maxmemory-policy", "noeviction");
      clocks.call(node, "CONFIG", "SET", "maxmemory", "1");
    }
    Grant holder;
    try {
      holder = engine.acquire(resource, TTL, Duration.ZERO, "").join();
    } finally {
      for (int node : new int[] {C, D}) {
        clocks.call(node, "CONFIG", "SET", "maxmemory", "0");
      }
    }
    String key = "redlock:{" + resource + "}:lock";
    for (int i = 0; i < clocks.size(); i++) {
      Object value = clocks.call(i, "GET", key);
      assertThat(value != null && value.toString().startsWith(holder.token() + " "))
          .as("node %d holds the holder's key", i).isEqualTo(i != C && i != D);
    }
    return holder;
  }

  String nodeName(int i) {
    return clocks.uris().get(i).substring("redis://".length());
  }

  /** What the clock watch logged that contains {@code text}. */
  List<String> logged(String text) {
    return log.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(text)).toList();
  }

  @Override
  public void close() {
    clocks.close();
  }
}
