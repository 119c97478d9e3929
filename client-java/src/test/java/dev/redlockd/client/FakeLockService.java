package dev.redlockd.client;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ExtendResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A scriptable stand-in for the server, for the client's API tests only: one holder per
 * resource (one per permit of a semaphore, under {@link #key}), no expiry, failures injected per
 * call. (Lock safety is tested against the real
 * server and real Redis.)
 */
final class FakeLockService extends LockServiceGrpc.LockServiceImplBase {
  record Held(String token, long fence) {}

  final Map<String, Held> locks;
  final List<AcquireRequest> acquires = new CopyOnWriteArrayList<>();
  final List<Long> acquireDeadlinesMs = new CopyOnWriteArrayList<>();
  final AtomicInteger releases = new AtomicInteger();
  /** Every Release and Extend request received, in order. */
  final List<ReleaseRequest> releaseLog = new CopyOnWriteArrayList<>();
  final List<ExtendRequest> extendLog = new CopyOnWriteArrayList<>();
  final Queue<Status> failNextAcquire = new ConcurrentLinkedQueue<>();
  final Queue<Status> failNextExtend = new ConcurrentLinkedQueue<>();
  final Queue<Status> failNextRelease = new ConcurrentLinkedQueue<>();
  /** How many of the next Releases get no answer at all, as from a replica gone silent. */
  final java.util.concurrent.atomic.AtomicInteger silentReleases = new java.util.concurrent.atomic.AtomicInteger();
  final List<StreamObserver<KeepAliveResponse>> streams = new CopyOnWriteArrayList<>();
  /** Every KeepAlive stream, in the order they were opened, live or not. */
  final List<StreamObserver<KeepAliveResponse>> opened = new CopyOnWriteArrayList<>();
  /** The KeepAlive streams the client cancelled (a RST_STREAM over a real connection). */
  final Set<StreamObserver<KeepAliveResponse>> cancelled = ConcurrentHashMap.newKeySet();
  /** The KeepAlive streams the client half-closed (which gives the lease back). */
  final Set<StreamObserver<KeepAliveResponse>> halfClosed = ConcurrentHashMap.newKeySet();
  volatile Duration delayNextAcquireAnswer = Duration.ZERO;
  volatile Duration delayEveryAcquireAnswer = Duration.ZERO;
  volatile Duration validity = Duration.ofSeconds(10);
  /** How long the answers to a stream's later KeepAlive requests spend on their way. */
  volatile Duration laterKeepAliveAnswerDelay = Duration.ZERO;
  final AtomicInteger keepAliveRequests = new AtomicInteger();
  /** Every KeepAlive request received, on any stream, in order. */
  final List<KeepAliveRequest> keepAliveLog = new CopyOnWriteArrayList<>();
  /** The first request of each KeepAlive stream, in order. */
  final List<KeepAliveRequest> keepAliveFirsts = new CopyOnWriteArrayList<>();
  /**
   * The stream each of {@link #keepAliveFirsts} came on: streams opened together may send their
   * first requests in another order than they opened.
   */
  private final Map<KeepAliveRequest, StreamObserver<KeepAliveResponse>> streamOfFirst = new ConcurrentHashMap<>();
  final AtomicInteger extendCalls = new AtomicInteger();
  /** Set: each new KeepAlive stream is ended with this status at its first request (a replica going away). */
  volatile Status refuseKeepAlive;
  /** True: KeepAlive requests get no answer (the test sends them with {@link #answerKeepAlive}). */
  volatile boolean keepAliveSilent;
  /** True: a KeepAlive answer's validity is what the server would compute from the request's ttl. */
  volatile boolean validityFollowsTtl;
  private final AtomicLong fences;
  private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();

  FakeLockService() {
    this.locks = new ConcurrentHashMap<>();
    this.fences = new AtomicLong(100);
  }

  /** A second replica: its own streams and counters, the same locks (Redis) as {@code first}. */
  FakeLockService(FakeLockService first) {
    this.locks = first.locks;
    this.fences = first.fences;
  }

  /** What the real server answers for a ttl: ttl - 1 % - 2 ms (lock.proto's drift). */
  static Duration validityFor(Duration ttl) {
    return ttl.minus(ttl.dividedBy(100)).minusMillis(2);
  }

  /** Where {@link #locks} keeps a lock ({@code permit} 0) or one permit of a semaphore. */
  static String key(String resource, int permit) {
    return permit == 0 ? resource : resource + "#permit" + permit;
  }

  private Lease lease(String resource, int permit, Held held) {
    return Lease.newBuilder()
        .setResource(resource)
        .setPermit(permit)
        .setToken(held.token())
        .setFencingToken(held.fence())
        .setValidity(ProtoTime.toProto(validity))
        .build();
  }

  @Override
  public void acquire(AcquireRequest request, StreamObserver<AcquireResponse> responses) {
    acquires.add(request);
    Deadline deadline = Context.current().getDeadline();
    acquireDeadlinesMs.add(deadline == null ? -1 : deadline.timeRemaining(TimeUnit.MILLISECONDS));
    Status failure = failNextAcquire.poll();
    if (failure != null) {
      responses.onError(failure.asRuntimeException());
      return;
    }
    String r = request.getResource();
    int permit = request.getPermits() == 0 ? 0 : choosePermit(r, request.getPermits(), request.getToken());
    Held held = locks.compute(key(r, permit), (k, current) -> current == null
        ? new Held(request.getToken(), fences.incrementAndGet()) : current);
    if (!held.token().equals(request.getToken())) {
      responses.onError(Status.ABORTED.withDescription("resource '" + r + "' is held").asRuntimeException());
      return;
    }
    AcquireResponse answer = AcquireResponse.newBuilder().setLease(lease(r, permit, held)).build();
    Duration delay = delayNextAcquireAnswer.isZero() ? delayEveryAcquireAnswer : delayNextAcquireAnswer;
    delayNextAcquireAnswer = Duration.ZERO;
    if (delay.isZero()) {
      responses.onNext(answer);
      responses.onCompleted();
    } else {
      // Granted, but the answer arrives after the caller's deadline: it is lost on the way.
      later.schedule(() -> {
        try {
          responses.onNext(answer);
          responses.onCompleted();
        } catch (RuntimeException cancelled) {
          // the call was already gone
        }
      }, delay.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** The permit this token already holds (a retry gets it back), else the first free one (else 1: refused). */
  private int choosePermit(String resource, int permits, String token) {
    for (int k = 1; k <= permits; k++) {
      Held held = locks.get(key(resource, k));
      if (held != null && held.token().equals(token)) {
        return k;
      }
    }
    for (int k = 1; k <= permits; k++) {
      if (!locks.containsKey(key(resource, k))) {
        return k;
      }
    }
    return 1;
  }

  @Override
  public void extend(ExtendRequest request, StreamObserver<ExtendResponse> responses) {
    extendCalls.incrementAndGet();
    extendLog.add(request);
    Status failure = failNextExtend.poll();
    Held held = locks.get(key(request.getResource(), request.getPermit()));
    if (failure == null && (held == null || !held.token().equals(request.getToken()))) {
      failure = Status.NOT_FOUND.withDescription("lease on resource '" + request.getResource() + "' is not held");
    }
    if (failure != null) {
      responses.onError(failure.asRuntimeException());
      return;
    }
    responses.onNext(ExtendResponse.newBuilder()
        .setLease(lease(request.getResource(), request.getPermit(), held)).build());
    responses.onCompleted();
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> responses) {
    releases.incrementAndGet();
    releaseLog.add(request);
    Status failure = failNextRelease.poll();
    if (failure != null) {
      responses.onError(failure.asRuntimeException());
      return;
    }
    if (silentReleases.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      return; // never answered: the client's deadline ends the call
    }
    String key = key(request.getResource(), request.getPermit());
    Held held = locks.get(key);
    boolean released = held != null && held.token().equals(request.getToken()) && locks.remove(key, held);
    responses.onNext(ReleaseResponse.newBuilder().setReleased(released).build());
    responses.onCompleted();
  }

  /** Answers each request once with HELD; the test ends streams with {@link #endStreams}. */
  @Override
  public StreamObserver<KeepAliveRequest> keepAlive(StreamObserver<KeepAliveResponse> responses) {
    streams.add(responses);
    opened.add(responses);
    return new StreamObserver<>() {
      private String resource;
      private int permit;
      private String token;

      @Override
      public void onNext(KeepAliveRequest request) {
        boolean first = resource == null;
        resource = request.getResource();
        permit = request.getPermit();
        token = request.getToken();
        keepAliveLog.add(request);
        if (first) {
          streamOfFirst.put(request, responses);
          keepAliveFirsts.add(request);
          Status refused = refuseKeepAlive;
          if (refused != null) {
            endStream(responses, refused);
            return;
          }
        }
        Held held = locks.get(key(resource, permit));
        if (held == null || !held.token().equals(token)) {
          endStream(responses, Status.NOT_FOUND.withDescription("not held"));
          return;
        }
        keepAliveRequests.incrementAndGet();
        if (keepAliveSilent) {
          return;
        }
        Duration valid = validityFollowsTtl ? validityFor(ProtoTime.fromProto(request.getTtl())) : validity;
        KeepAliveResponse answer = keepAliveAnswer(resource, permit, held, request.getSequence(), valid);
        long delay = request.getSequence() > 1 ? laterKeepAliveAnswerDelay.toNanos() : 0;
        later.schedule(() -> {
          synchronized (responses) {
            if (streams.contains(responses)) {
              responses.onNext(answer);
            }
          }
        }, delay, TimeUnit.NANOSECONDS);
      }

      @Override
      public void onError(Throwable t) {
        cancelled.add(responses);
        streams.remove(responses);
      }

      @Override
      public void onCompleted() {
        halfClosed.add(responses);
        Held held = locks.get(key(resource, permit));
        if (held != null && held.token().equals(token)) {
          locks.remove(key(resource, permit), held);
        }
        endStream(responses, Status.OK);
      }
    };
  }

  private KeepAliveResponse keepAliveAnswer(String resource, int permit, Held held, long sequence, Duration valid) {
    return KeepAliveResponse.newBuilder()
        .setLease(Lease.newBuilder().setResource(resource).setPermit(permit).setToken(held.token())
            .setFencingToken(held.fence())
            .setValidity(ProtoTime.toProto(valid)))
        .setState(LeaseState.LEASE_STATE_HELD).setSequence(sequence).build();
  }

  /** Sends an answer echoing {@code sequence} on every live KeepAlive stream (for a silent fake). */
  void answerKeepAlive(String resource, long sequence, Duration valid) {
    Held held = locks.get(resource);
    for (StreamObserver<KeepAliveResponse> s : streams) {
      synchronized (s) {
        if (streams.contains(s)) {
          s.onNext(keepAliveAnswer(resource, 0, held, sequence, valid));
        }
      }
    }
  }

  /** Sends an answer echoing {@code sequence} on the {@code index}-th KeepAlive stream opened, if it is live. */
  void answerKeepAliveOn(int index, String resource, long sequence, Duration valid) {
    answerKeepAlive(opened.get(index), resource, sequence, valid);
  }

  /** Answers {@code first} (one of {@link #keepAliveFirsts}) on the stream it came on, if that is live. */
  void answerFirstKeepAlive(KeepAliveRequest first, Duration valid) {
    answerKeepAlive(streamOfFirst.get(first), first.getResource(), first.getSequence(), valid);
  }

  private void answerKeepAlive(StreamObserver<KeepAliveResponse> s, String resource, long sequence, Duration valid) {
    synchronized (s) {
      if (streams.contains(s)) {
        s.onNext(keepAliveAnswer(resource, 0, locks.get(resource), sequence, valid));
      }
    }
  }

  void endStreams(Status status) {
    streams.forEach(s -> endStream(s, status));
  }

  private void endStream(StreamObserver<KeepAliveResponse> responses, Status status) {
    if (!streams.remove(responses)) {
      return;
    }
    synchronized (responses) {
      if (status.isOk()) {
        responses.onCompleted();
      } else {
        responses.onError(status.asRuntimeException());
      }
    }
  }

  void shutdown() {
    later.shutdownNow();
  }
}
