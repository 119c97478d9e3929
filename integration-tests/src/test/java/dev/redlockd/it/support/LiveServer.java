package dev.redlockd.it.support;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.testing.RedisCluster;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;

/** Real redis-server processes, the real server over Netty on a free port, and a channel to it. */
public final class LiveServer extends StartedServer {
  public LiveServer(int nodes, String... flags) throws Exception {
    this(RedisCluster.start(nodes), flags);
  }

  /** A server over an existing cluster; closing the server closes the cluster too. */
  public LiveServer(RedisCluster cluster, String... flags) throws Exception {
    super(cluster, List.of("--port", "0"), flags, RedlockdServer::start,
        server -> Grpc.newChannelBuilder("127.0.0.1:" + server.port(), InsecureChannelCredentials.create()).build());
  }

  /** An Acquire with every field; an empty token lets the server choose one. */
  public static AcquireRequest acquireRequest(String resource, Duration ttl, Duration wait, String token) {
    return AcquireRequest.newBuilder()
        .setResource(resource)
        .setTtl(proto(ttl))
        .setWait(proto(wait))
        .setToken(token)
        .build();
  }

  /** Runs a call and returns the status it ended with: OK, or the code of its error. */
  public static Status codeOf(Runnable call) {
    try {
      call.run();
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    }
  }

  public static com.google.protobuf.Duration proto(Duration d) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  public static Duration fromProto(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }
}
