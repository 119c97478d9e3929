package dev.redlockd.sim;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

/**
 * One engine replica's connection to one node, as the engine's Netty client behaves: calls go
 * out at once, are answered in order, fail with a TimeoutException after the node timeout
 * (the connection is kept, so a late reply is dropped and a later call still runs after the
 * late one on the node), and the connection is dropped when its oldest call is a second past
 * its deadline. A dropped connection fails every call on it; a request already on the wire
 * may still reach the node (after anything sent on the next connection) or be lost.
 */
final class SimLink implements RedisNode {
  private static final long STUCK_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final SimLoop loop;
  private final SimHost host;
  private final SimNetwork network;
  private final long timeoutNanos;
  /** Told of every request that never reached the node, with its first argument (the token). */
  private final BiConsumer<SimHost, String> lost;
  private final java.util.function.Consumer<java.util.function.Supplier<String>> trace;
  private final String replica;
  private final List<Call> calls = new ArrayList<>();
  private int connection;
  private long lastArrival;
  private long lastReply;

  private final class Call {
    final CompletableFuture<Object> result = new CompletableFuture<>();
    final String token;
    final long deadline;
    final int connection;
    boolean arrived;
    boolean lostOnTheWire;

    Call(String token, long deadline, int connection) {
      this.token = token;
      this.deadline = deadline;
      this.connection = connection;
    }
  }

  SimLink(SimLoop loop, SimHost host, SimNetwork network, long timeoutNanos, BiConsumer<SimHost, String> lost,
      java.util.function.Consumer<java.util.function.Supplier<String>> trace, String replica) {
    this.trace = trace;
    this.replica = replica;
    this.loop = loop;
    this.host = host;
    this.network = network;
    this.timeoutNanos = timeoutNanos;
    this.lost = lost;
    host.attach(this);
  }

  @Override
  public String name() {
    return host.name;
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    String token = args.isEmpty() ? "" : args.get(0);
    return send(token, () -> {
      CompletableFuture<Object> reply = host.redis.eval(script, keys, args);
      trace.accept(() -> host.name + " ran " + script.name() + " " + SimChecker.tag(token) + " from " + replica
          + " -> " + reply.handle((r, f) -> f == null ? String.valueOf(r) : f.getMessage()).join());
      return reply;
    });
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    return send("", () -> host.redis.command(args));
  }

  private CompletableFuture<Object> send(String token, java.util.function.Supplier<CompletableFuture<Object>> run) {
    Call call = new Call(token, loop.now() + timeoutNanos, connection);
    calls.add(call);
    int generation = host.generation();
    long arrival = Math.max(loop.now() + network.latency(host), lastArrival);
    lastArrival = arrival;
    loop.at(arrival, () -> {
      if (call.lostOnTheWire || host.generation() != generation) {
        lost.accept(host, call.token);
        return;
      }
      call.arrived = true;
      host.arrive(() -> {
        if (host.generation() != generation) {
          lost.accept(host, call.token);
          return;
        }
        CompletableFuture<Object> reply = run.get();
        if (call.connection != connection) {
          return; // ran, but the connection it came on is gone: the reply goes nowhere
        }
        long back = Math.max(loop.now() + network.latency(host), lastReply);
        lastReply = back;
        loop.at(back, () -> {
          if (call.connection == connection) {
            calls.remove(call);
            reply.whenComplete((value, failure) -> {
              if (failure == null) {
                call.result.complete(value);
              } else {
                call.result.completeExceptionally(failure);
              }
            });
          }
        });
      });
    });
    loop.at(call.deadline, () -> {
      if (!call.result.isDone()) {
        call.result.completeExceptionally(new TimeoutException("Redis node " + host.name + " did not answer in time"));
        loop.at(call.deadline + STUCK_NANOS, () -> {
          if (call.connection == connection && calls.contains(call)) {
            drop("not answered for a second past a deadline");
          }
        });
      }
    });
    return call.result;
  }

  /** The connection fails: every call on it fails now; the next call connects afresh. */
  void drop(String why) {
    connection++;
    lastArrival = loop.now();
    lastReply = loop.now();
    List<Call> failed = new ArrayList<>(calls);
    calls.clear();
    for (Call call : failed) {
      if (!call.arrived && network.lostOnDrop()) {
        call.lostOnTheWire = true;
      }
      call.result.completeExceptionally(new IOException("connection to " + host.name + " dropped: " + why));
    }
  }

  @Override
  public void close() {}

  @Override
  public String toString() {
    return "link to " + host.name;
  }
}
