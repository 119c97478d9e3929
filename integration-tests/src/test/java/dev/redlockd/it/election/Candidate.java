package dev.redlockd.it.election;

import static dev.redlockd.it.support.LiveServer.proto;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A candidate over a raw Campaign stream, as a client keeps it: a request every ttl/4 with a
 * rising sequence, and a leadership that counts as valid until (send time of the request whose
 * sequence the last answer echoed) + validity. Records when it began to lead and when it
 * stopped counting itself leader, for the tests to check that no two overlap.
 */
final class Candidate implements ClientResponseObserver<CampaignRequest, CampaignResponse>, AutoCloseable {
  private static final ScheduledExecutorService PINGS = Executors.newScheduledThreadPool(1, r -> {
    Thread t = new Thread(r, "candidate-pings");
    t.setDaemon(true);
    return t;
  });

  final String name;
  private final String election;
  private final Duration ttl;
  private final ConcurrentHashMap<Long, Long> sentAt = new ConcurrentHashMap<>();
  private final List<CampaignResponse> answers = new CopyOnWriteArrayList<>();
  final CompletableFuture<CampaignResponse> leading = new CompletableFuture<>();
  final CompletableFuture<Status> ended = new CompletableFuture<>();
  private ClientCallStreamObserver<CampaignRequest> requests;
  private long sequence;
  private volatile long leadingSince;
  /** Monotonic nanos until which this candidate may count itself leader. */
  private volatile long validUntil;
  private volatile long resignedAt;
  private volatile String value;
  /** The candidate's own token (empty: the server makes one) and whether it resumes a leadership. */
  private final String token;
  private final boolean resume;

  Candidate(Channel channel, String name, String election, String value, Duration ttl) {
    this(channel, name, election, value, ttl, "", false);
  }

  Candidate(Channel channel, String name, String election, String value, Duration ttl, String token, boolean resume) {
    this.name = name;
    this.election = election;
    this.value = value;
    this.ttl = ttl;
    this.token = token;
    this.resume = resume;
    ElectionServiceGrpc.newStub(channel).campaign(this);
    ping();
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<CampaignRequest> requestStream) {
    this.requests = requestStream;
  }

  private synchronized void ping() {
    if (ended.isDone() || resignedAt != 0) {
      return;
    }
    long seq = ++sequence;
    sentAt.put(seq, System.nanoTime());
    requests.onNext(CampaignRequest.newBuilder().setElection(election).setValue(value).setTtl(proto(ttl))
        .setSequence(seq).setToken(token).setResume(resume).build());
    PINGS.schedule(this::ping, ttl.toMillis() / 4, TimeUnit.MILLISECONDS);
  }

  /** Asks for a new value; the answer with it arrives as a later response. */
  synchronized void proclaim(String newValue) {
    value = newValue;
    long seq = ++sequence;
    sentAt.put(seq, System.nanoTime());
    requests.onNext(CampaignRequest.newBuilder().setElection(election).setValue(value).setTtl(proto(ttl))
        .setSequence(seq).build());
  }

  @Override
  public void onNext(CampaignResponse response) {
    long now = System.nanoTime();
    Long sent = sentAt.get(response.getSequence());
    long validity = TimeUnit.SECONDS.toNanos(response.getValidity().getSeconds()) + response.getValidity().getNanos();
    if (sent != null) {
      validUntil = Math.max(validUntil, sent + validity);
    }
    if (leadingSince == 0) {
      leadingSince = now;
    }
    answers.add(response);
    leading.complete(response);
  }

  @Override
  public void onError(Throwable t) {
    ended.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    ended.complete(Status.OK);
  }

  /** Half-close: resign. */
  synchronized void resign() {
    if (resignedAt == 0) {
      resignedAt = System.nanoTime();
      requests.onCompleted();
    }
  }

  /** Gone without a word, as a killed process is. */
  void vanish() {
    requests.cancel("the candidate's process died", null);
  }

  boolean led() {
    return leadingSince != 0;
  }

  long leadingSince() {
    return leadingSince;
  }

  /** The end of the time this candidate counted itself leader: its resignation, or its validity. */
  long leadingUntil() {
    return resignedAt != 0 ? Math.min(resignedAt, validUntil) : validUntil;
  }

  long term() {
    return leading.join().getTerm();
  }

  List<CampaignResponse> answers() {
    return answers;
  }

  @Override
  public void close() {
    if (!ended.isDone()) {
      requests.cancel("test over", null);
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
