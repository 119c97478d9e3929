package dev.redlockd.client;

import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Watches an election: calls back with its leader (or none) at once and after every change,
 * until {@link #close()}. A stream that ends (a server restarting, a network blip) is reopened
 * with the client's backoff and no attempt limit; the reopened stream's first state is passed
 * on only if it is news, and never a leader older than one already reported, so the callback
 * sees each change once and in term order. {@link LeaderUpdates} is the same watch, read as a
 * stream instead ({@link LockClient#observe(String)}).
 */
public final class Observation implements AutoCloseable {
  /** Reopening is never tighter than this, whatever the retry policy says. */
  private static final Duration MIN_REOPEN = Duration.ofMillis(50);

  private final LockClient client;
  private final ElectionServiceGrpc.ElectionServiceStub stub;
  private final String election;
  private final Consumer<Optional<Leader>> callback;
  private final Object delivery = new Object();
  private Optional<Leader> last; // guarded by delivery; null before the first state
  private long highestTerm; // guarded by delivery
  private boolean closed; // guarded by delivery
  private int failures; // guarded by delivery
  private ClientCallStreamObserver<ObserveRequest> current; // guarded by delivery

  Observation(LockClient client, ElectionServiceGrpc.ElectionServiceStub stub, String election,
      Consumer<Optional<Leader>> callback) {
    this.client = client;
    this.stub = stub;
    this.election = election;
    this.callback = callback;
  }

  void open() {
    stub.observe(ObserveRequest.newBuilder().setElection(election).build(), new Watch());
  }

  private void deliver(Optional<Leader> state) {
    synchronized (delivery) {
      failures = 0;
      if (closed || state.equals(last)) {
        return;
      }
      if (state.isPresent()) {
        long term = state.get().term();
        if (Long.compareUnsigned(term, highestTerm) < 0) {
          return; // a server behind the one that told us about the later term
        }
        highestTerm = term;
      }
      last = state;
      callback.accept(state);
    }
  }

  /** {@code pushbackNanos}: the server's refusal ({@link Pushback}), which replaces the backoff. */
  private void reopenLater(long pushbackNanos) {
    Duration backoff;
    synchronized (delivery) {
      if (closed) {
        return;
      }
      failures++;
      backoff = client.retryPolicy().backoff(failures);
    }
    if (pushbackNanos == Pushback.STOP) {
      backoff = client.retryPolicy().maxBackoff(); // no limit and nobody to fail: the longest wait
    } else if (pushbackNanos >= 0) {
      backoff = Duration.ofNanos(Pushback.jittered(pushbackNanos));
    }
    if (backoff.compareTo(MIN_REOPEN) < 0) {
      backoff = MIN_REOPEN;
    }
    client.scheduler().schedule(this::open, backoff.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Stops watching; once it returns, the callback is not called again. */
  @Override
  public void close() {
    ClientCallStreamObserver<ObserveRequest> call;
    synchronized (delivery) {
      closed = true;
      call = current;
    }
    if (call != null) {
      call.cancel("the observer closed", null);
    }
  }

  @Override
  public String toString() {
    return "Observation[election=" + election + "]";
  }

  /** One Observe stream; a reopened one gets a new watch. */
  private final class Watch implements ClientResponseObserver<ObserveRequest, ObserveResponse> {
    @Override
    public void beforeStart(ClientCallStreamObserver<ObserveRequest> requestStream) {
      boolean alreadyClosed;
      synchronized (delivery) {
        current = requestStream;
        alreadyClosed = closed;
      }
      if (alreadyClosed) {
        requestStream.cancel("the observer closed", null);
      }
    }

    @Override
    public void onNext(ObserveResponse response) {
      deliver(response.hasLeader() ? Optional.of(Leader.of(response.getLeader())) : Optional.empty());
    }

    @Override
    public void onError(Throwable t) {
      reopenLater(Pushback.of(t));
    }

    @Override
    public void onCompleted() {
      reopenLater(Pushback.ABSENT);
    }
  }
}
