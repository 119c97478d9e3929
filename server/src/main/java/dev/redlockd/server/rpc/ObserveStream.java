package dev.redlockd.server.rpc;

import dev.redlockd.election.Elections;
import dev.redlockd.election.Leader;
import dev.redlockd.proto.v1.ObserveResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Observe stream: the election's leader (or none) and every change, until the client leaves
 * or the server stops. A client that reads slower than the election changes gets the latest
 * state when it reads again, not a queue of old ones.
 */
final class ObserveStream extends ServerStream<ObserveResponse> implements Consumer<Optional<Leader>> {
  private static final Logger log = LoggerFactory.getLogger(ObserveStream.class);

  private AutoCloseable observation; // guarded by this

  ObserveStream(OpenStreams registry, ServerCallStreamObserver<ObserveResponse> call) {
    super(registry, call);
  }

  /** Starts observing; an invalid election name ends the stream at once. */
  void start(Elections elections, String election) {
    AutoCloseable started = elections.observe(election, this);
    boolean keep;
    synchronized (this) {
      keep = !finished();
      if (keep) {
        observation = started;
      }
    }
    if (!keep) {
      close(started);
    }
  }

  @Override
  public void accept(Optional<Leader> leader) {
    ObserveResponse.Builder response = ObserveResponse.newBuilder();
    leader.ifPresent(l -> response.setLeader(ElectionServiceAdapter.toProto(l)));
    sendLatest(response.build());
  }

  @Override
  public CompletableFuture<Void> shutdown() {
    finish(StatusMapper.shuttingDown());
    return CompletableFuture.completedFuture(null);
  }

  /** Ends the stream with this status and stops observing. */
  void finish(Status status) {
    end(status);
    abandoned();
  }

  @Override
  protected void abandoned() {
    AutoCloseable stopped;
    synchronized (this) {
      stopped = observation;
      observation = null;
    }
    if (stopped != null) {
      close(stopped);
    }
  }

  private static void close(AutoCloseable observation) {
    try {
      observation.close();
    } catch (Exception e) {
      log.debug("closing an observation", e);
    }
  }
}
