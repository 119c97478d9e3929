package dev.redlockd.server;

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

/** One Observe stream: the election's leader (or none) and every change, until the client leaves or the server stops. */
final class ObserveStream implements Consumer<Optional<Leader>>, OpenStreams.OpenStream {
  private static final Logger log = LoggerFactory.getLogger(ObserveStream.class);

  private final OpenStreams registry;
  private final ServerCallStreamObserver<ObserveResponse> call;
  private AutoCloseable observation; // guarded by this
  private boolean finished; // guarded by this

  ObserveStream(OpenStreams registry, ServerCallStreamObserver<ObserveResponse> call) {
    this.registry = registry;
    this.call = call;
    call.setOnCancelHandler(() -> finish(null));
  }

  /** Starts observing; an invalid election name ends the stream at once. */
  void start(Elections elections, String election) {
    AutoCloseable started = elections.observe(election, this);
    boolean keep;
    synchronized (this) {
      keep = !finished;
      if (keep) {
        observation = started;
      }
    }
    if (!keep) {
      close(started);
    }
  }

  @Override
  public synchronized void accept(Optional<Leader> leader) {
    if (finished || call.isCancelled()) {
      return;
    }
    ObserveResponse.Builder response = ObserveResponse.newBuilder();
    leader.ifPresent(l -> response.setLeader(ElectionServiceAdapter.toProto(l)));
    call.onNext(response.build());
  }

  @Override
  public CompletableFuture<Void> shutdown() {
    finish(StatusMapper.shuttingDown());
    return CompletableFuture.completedFuture(null);
  }

  /** Ends the stream with this status (null: the client left), once. */
  void finish(Status status) {
    AutoCloseable stopped;
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
      stopped = observation;
      observation = null;
      if (status != null && !call.isCancelled()) {
        call.onError(status.asRuntimeException());
      }
    }
    if (stopped != null) {
      close(stopped);
    }
    registry.closed(this);
  }

  private static void close(AutoCloseable observation) {
    try {
      observation.close();
    } catch (Exception e) {
      log.debug("closing an observation", e);
    }
  }
}
