package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The node client sends the scripts one pass of a loop makes as one call, against a real redis-server. */
class ScriptBatchTest {
  private static final LuaScript SET = LuaScript.of("set", "return redis.call('SET', KEYS[1], ARGV[1])");
  private static final LuaScript GET = LuaScript.of("get", "return redis.call('GET', KEYS[1])");
  private static final LuaScript FAIL = LuaScript.of("fail", "return redis.call('INCR', KEYS[1])");
  private static final LuaScript ALONE = LuaScript.of("alone", "return 'alone'");
  private static final ScriptBatch BATCH = ScriptBatch.of(List.of(SET, GET, FAIL));
  private static RedisCluster cluster;
  private static NettyRedisNode node;
  private static RedisIo io;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(1);
    io = RedisIo.shared();
    node = new NettyRedisNode(NodeAddress.parse(cluster.uris().get(0)), Duration.ofSeconds(2), io, null,
        new InstanceIds(), BATCH);
    for (int i = 0; i < 20 && node.command("PING").handle((reply, failure) -> failure).join() != null; i++) {
      // a cold JVM's first connection may miss the timeout; these tests are about the warm path
    }
  }

  @AfterAll
  static void stop() {
    node.close();
    cluster.close();
  }

  @BeforeEach
  void fresh() {
    cluster.call(0, "FLUSHALL");
    cluster.call(0, "CONFIG", "RESETSTAT");
  }

  /** Makes the calls on one event loop, in one task: one pass, so one flush. */
  private static List<CompletableFuture<Object>> inOnePass(CallMaker maker) throws Exception {
    EventLoopTask task = new EventLoopTask(maker);
    io.loops().get(0).submit(task).get(5, TimeUnit.SECONDS);
    return task.calls;
  }

  private interface CallMaker {
    void make(List<CompletableFuture<Object>> calls);
  }

  private static final class EventLoopTask implements Runnable {
    final CallMaker maker;
    final List<CompletableFuture<Object>> calls = new ArrayList<>();

    EventLoopTask(CallMaker maker) {
      this.maker = maker;
    }

    @Override
    public void run() {
      maker.make(calls);
    }
  }

  /** Script calls the node ran: by EVALSHA, or by EVAL (a connection's first call of each script). */
  private static long scriptCalls() {
    return calls("evalsha") + calls("eval");
  }

  private static long calls(String command) {
    String stats = (String) cluster.call(0, "INFO", "commandstats");
    return stats.lines().filter(line -> line.startsWith("cmdstat_" + command + ":")).findFirst()
        .map(line -> Long.parseLong(line.replaceAll("^[^:]*:calls=(\\d+),.*", "$1"))).orElse(0L);
  }

  @Test
  void scriptsMadeInOnePassGoAsOneCallAndEachGetsItsOwnReply() throws Exception {
    cluster.call(0, "SCRIPT", "LOAD", BATCH.script().source());
    List<CompletableFuture<Object>> calls = inOnePass(made -> {
      for (int i = 0; i < 10; i++) {
        made.add(node.eval(SET, List.of("k" + i), List.of("v" + i)));
        made.add(node.eval(GET, List.of("k" + i), List.of()));
      }
    });
    for (int i = 0; i < 10; i++) {
      assertThat(calls.get(2 * i).get(2, TimeUnit.SECONDS)).isEqualTo("OK");
      assertThat(calls.get(2 * i + 1).get(2, TimeUnit.SECONDS)).isEqualTo("v" + i);
    }
    assertThat(scriptCalls()).as("script calls for 20 scripts in one pass").isEqualTo(1);
  }

  @Test
  void scriptsMadeTogetherOffTheLoopsGoAsOneCall() throws Exception {
    cluster.call(0, "SCRIPT", "LOAD", BATCH.script().source());
    List<CompletableFuture<Object>> calls = new ArrayList<>();
    // As the engine's renewals are made: on a thread of its own, handed to the loop in one task.
    Pipelining.together(() -> {
      for (int i = 0; i < 20; i++) {
        calls.add(node.eval(SET, List.of("t" + i), List.of("v")));
      }
    });
    for (CompletableFuture<Object> call : calls) {
      assertThat(call.get(2, TimeUnit.SECONDS)).isEqualTo("OK");
    }
    assertThat(scriptCalls()).as("script calls for 20 scripts made together").isEqualTo(1);
  }

  @Test
  void scriptsHeldForABatchStillTimeOutWhenTheNodeIsFrozen() throws Exception {
    cluster.call(0, "SCRIPT", "LOAD", BATCH.script().source());
    cluster.pause(0);
    try {
      CompletableFuture<Object> alone = node.eval(SET, List.of("frozen-alone"), List.of("v"));
      List<CompletableFuture<Object>> batched = inOnePass(made -> {
        made.add(node.eval(SET, List.of("frozen-1"), List.of("v")));
        made.add(node.eval(GET, List.of("frozen-1"), List.of()));
      });
      for (CompletableFuture<Object> call : List.of(alone, batched.get(0), batched.get(1))) {
        // The node timeout is 2 s: each fails by its own deadline, none waits for the node.
        assertThat(call).failsWithin(4, TimeUnit.SECONDS).withThrowableOfType(ExecutionException.class)
            .havingCause().isInstanceOf(java.util.concurrent.TimeoutException.class);
      }
    } finally {
      cluster.resume(0);
    }
  }

  @Test
  void oneFailingScriptAnswersItsOwnErrorAndTheOthersStillRun() throws Exception {
    cluster.call(0, "SET", "text", "not a number");
    List<CompletableFuture<Object>> calls = inOnePass(made -> {
      made.add(node.eval(SET, List.of("a"), List.of("1")));
      made.add(node.eval(FAIL, List.of("text"), List.of()));
      made.add(node.eval(SET, List.of("b"), List.of("2")));
      made.add(node.eval(GET, List.of("missing"), List.of()));
    });
    assertThat(calls.get(0).get(2, TimeUnit.SECONDS)).isEqualTo("OK");
    assertThat(calls.get(1)).failsWithin(2, TimeUnit.SECONDS).withThrowableOfType(ExecutionException.class)
        .havingCause().isInstanceOf(RedisErrorReply.class).withMessageContaining("not an integer");
    assertThat(calls.get(2).get(2, TimeUnit.SECONDS)).isEqualTo("OK");
    assertThat(calls.get(3).get(2, TimeUnit.SECONDS)).as("a nil reply stays nil").isNull();
    assertThat(cluster.call(0, "MGET", "a", "b")).isEqualTo(List.of("1", "2"));
  }

  @Test
  void aNodeThatLostItsScriptsRunsTheBatchByEval() throws Exception {
    cluster.call(0, "SCRIPT", "FLUSH");
    List<CompletableFuture<Object>> calls = inOnePass(made -> {
      made.add(node.eval(SET, List.of("x"), List.of("1")));
      made.add(node.eval(GET, List.of("x"), List.of()));
    });
    assertThat(calls.get(1).get(2, TimeUnit.SECONDS)).isEqualTo("1");
    assertThat(calls("eval")).isEqualTo(1);
    assertThat(cluster.call(0, "SCRIPT", "EXISTS", BATCH.script().sha1())).isEqualTo(List.of(1L));
  }

  @Test
  void aPassWithMoreScriptsThanABatchHoldsSendsSeveralBatches() throws Exception {
    cluster.call(0, "SCRIPT", "LOAD", BATCH.script().source());
    int scripts = 3 * ScriptBatch.MAX_SCRIPTS + 5;
    List<CompletableFuture<Object>> calls = inOnePass(made -> {
      for (int i = 0; i < scripts; i++) {
        made.add(node.eval(SET, List.of("k" + i), List.of("v")));
      }
    });
    for (CompletableFuture<Object> call : calls) {
      assertThat(call.get(2, TimeUnit.SECONDS)).isEqualTo("OK");
    }
    assertThat(scriptCalls()).isEqualTo(4);
  }

  @Test
  void scriptsOutsideTheBatchAndPlainCommandsGoAloneInTheOrderMade() throws Exception {
    cluster.call(0, "SCRIPT", "LOAD", BATCH.script().source());
    cluster.call(0, "SCRIPT", "LOAD", ALONE.source());
    cluster.call(0, "SCRIPT", "LOAD", SET.source()); // a script alone goes by its own EVALSHA
    List<CompletableFuture<Object>> calls = inOnePass(made -> {
      made.add(node.eval(SET, List.of("k"), List.of("1")));
      made.add(node.command("GET", "k")); // must see the SET made before it
      made.add(node.eval(ALONE, List.of(), List.of()));
      made.add(node.eval(SET, List.of("k"), List.of("2")));
      made.add(node.eval(GET, List.of("k"), List.of()));
    });
    assertThat(calls.get(1).get(2, TimeUnit.SECONDS)).isEqualTo("1");
    assertThat(calls.get(2).get(2, TimeUnit.SECONDS)).isEqualTo("alone");
    assertThat(calls.get(4).get(2, TimeUnit.SECONDS)).isEqualTo("2");
    // SET alone (the GET cut the batch), ALONE alone, then SET + GET as one batch.
    assertThat(scriptCalls()).isEqualTo(3);
  }
}
