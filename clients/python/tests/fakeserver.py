"""A fake LockService and ElectionService on a real localhost gRPC server, scripted per test.

Every call is recorded with the monotonic time it arrived (the test and the server share the
process, hence the clock), and tests wait on ``wait_for`` instead of sleeping.
"""
from __future__ import annotations

import heapq
import itertools
import threading
import time
from concurrent import futures
from typing import Any, Callable, Iterator, List, Optional, Tuple

import grpc

from redlockd import LockClient, RetryPolicy
from redlockd._scheduler import Scheduled
from redlockd._durations import from_proto, to_proto
from redlockd._proto import election_pb2, election_pb2_grpc, lock_pb2, lock_pb2_grpc

#: Quick retries, so that tests of retries run fast.
FAST_RETRY = RetryPolicy(max_attempts=4, initial_backoff=0.01, max_backoff=0.05)


def lease_message(resource: str, token: str, validity: float, fencing_token: int = 7,
                  permit: int = 0) -> lock_pb2.Lease:
    return lock_pb2.Lease(resource=resource, token=token, validity=to_proto(validity),
                          fencing_token=fencing_token, permit=permit)


class FakeLockService(lock_pb2_grpc.LockServiceServicer):
    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.acquires: List[Tuple[lock_pb2.AcquireRequest, float]] = []
        self.extends: List[lock_pb2.ExtendRequest] = []
        self.releases: List[lock_pb2.ReleaseRequest] = []
        self.keep_alive_requests: List[Tuple[lock_pb2.KeepAliveRequest, float]] = []
        # Per stream, once it ends: "half-closed" or "cancelled"; only with note_ends (telling
        # them apart holds a half-close back for 200 ms, see ended_how).
        self.note_ends = False
        self.keep_alive_ends: List[str] = []
        self._fencing = itertools.count(100)
        self._released_tokens: set = set()
        # Scripts: each gets (request, context, call number) and answers or aborts.
        self.on_acquire: Callable = self.grant
        self.on_extend: Callable = self.extend_ok
        self.on_release: Callable = self.release_once
        # Gets (requests, context) and yields the answers.
        self.on_keep_alive: Callable = self.echo_keep_alive

    # --- recording ---------------------------------------------------------------------------

    def _record(self, calls: list, item) -> int:
        with self.changed:
            calls.append(item)
            self.changed.notify_all()
            return len(calls)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    # --- the service ---------------------------------------------------------------------------

    def Acquire(self, request, context):
        n = self._record(self.acquires, (request, time.monotonic()))
        return self.on_acquire(request, context, n)

    def Extend(self, request, context):
        n = self._record(self.extends, request)
        return self.on_extend(request, context, n)

    def Release(self, request, context):
        n = self._record(self.releases, request)
        return self.on_release(request, context, n)

    def KeepAlive(self, request_iterator, context):
        def recorded() -> Iterator[lock_pb2.KeepAliveRequest]:
            try:
                for request in request_iterator:
                    self._record(self.keep_alive_requests, (request, time.monotonic()))
                    yield request
            except grpc.RpcError:
                self._record(self.keep_alive_ends, "cancelled")
                return
            if self.note_ends:
                self._record(self.keep_alive_ends, ended_how(context))
        yield from self.on_keep_alive(recorded(), context)

    # --- default scripts ---------------------------------------------------------------------

    def grant(self, request, context, n, validity: Optional[float] = None, permit: Optional[int] = None):
        """A grant; of a permit request (permits N), permit N unless ``permit`` says another."""
        ttl = from_proto(request.ttl)
        return lock_pb2.AcquireResponse(lease=lease_message(
            request.resource, request.token, ttl * 0.99 if validity is None else validity,
            next(self._fencing), request.permits if permit is None else permit))

    def extend_ok(self, request, context, n):
        return lock_pb2.ExtendResponse(lease=lease_message(
            request.resource, request.token, from_proto(request.ttl) * 0.99, permit=request.permit))

    def release_once(self, request, context, n):
        with self.changed:
            first = request.token not in self._released_tokens
            self._released_tokens.add(request.token)
        return lock_pb2.ReleaseResponse(released=first)

    def echo_keep_alive(self, requests, context):
        """Answers each request at once, echoing its sequence, until the client half-closes."""
        for request in requests:
            yield lock_pb2.KeepAliveResponse(
                lease=lease_message(request.resource, request.token, from_proto(request.ttl) * 0.99,
                                    permit=request.permit),
                state=lock_pb2.LEASE_STATE_HELD, sequence=request.sequence)


class FakeElectionService(election_pb2_grpc.ElectionServiceServicer):
    """Campaign streams, Leader calls and Observe streams, recorded and scripted like the
    LockService's calls."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.campaign_requests: List[Tuple[election_pb2.CampaignRequest, float]] = []
        self.campaign_ends: List[str] = []  # per stream: "half-closed" or "cancelled"
        self.leader_calls: List[election_pb2.LeaderRequest] = []
        self.observe_calls: List[Tuple[election_pb2.ObserveRequest, float]] = []
        self.terms = itertools.count(500)
        # Gets (requests, context) and yields the answers.
        self.on_campaign: Callable = self.lead_at_once
        # Gets (request, context, call number) and answers or aborts.
        self.on_leader: Callable = lambda request, context, n: election_pb2.LeaderResponse()
        # Gets (request, context, call number) and yields the states.
        self.on_observe: Callable = self.hold_open

    def _record(self, calls: list, item) -> int:
        with self.changed:
            calls.append(item)
            self.changed.notify_all()
            return len(calls)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def Campaign(self, request_iterator, context):
        def recorded() -> Iterator[election_pb2.CampaignRequest]:
            try:
                for request in request_iterator:
                    self._record(self.campaign_requests, (request, time.monotonic()))
                    yield request
            except grpc.RpcError:
                self._record(self.campaign_ends, "cancelled")
                return
            self._record(self.campaign_ends, ended_how(context))
        yield from self.on_campaign(recorded(), context)

    def Leader(self, request, context):
        n = self._record(self.leader_calls, request)
        return self.on_leader(request, context, n)

    def Observe(self, request, context):
        n = self._record(self.observe_calls, (request, time.monotonic()))
        yield from self.on_observe(request, context, n)

    # --- default scripts ---------------------------------------------------------------------

    def lead_at_once(self, requests, context):
        """Leads from the first request, answering each request at once (echoing its sequence
        and value), until the client half-closes."""
        term = next(self.terms)
        for request in requests:
            yield campaign_answer(request, term)

    @staticmethod
    def hold_open(request, context, n):
        yield election_pb2.ObserveResponse()
        while context.is_active():
            time.sleep(0.01)


def ended_how(context) -> str:
    """How a stream's requests ended without an error: "half-closed", or "cancelled" (a cancel
    can also end the requests as a half-close does, just before the server marks the call
    cancelled: it is given a moment to show)."""
    until = time.monotonic() + 0.2
    while context.is_active() and time.monotonic() < until:
        time.sleep(0.005)
    return "half-closed" if context.is_active() else "cancelled"


def campaign_answer(request, term: int, validity: Optional[float] = None, sequence: Optional[int] = None,
                    value: Optional[str] = None) -> election_pb2.CampaignResponse:
    return election_pb2.CampaignResponse(
        term=term, value=request.value if value is None else value,
        validity=to_proto(from_proto(request.ttl) * 0.99 if validity is None else validity),
        state=lock_pb2.LEASE_STATE_HELD,
        sequence=request.sequence if sequence is None else sequence)


class Answers:
    """The client's "answer processed" hook (``LockClient(_answered=...)``): counts the answers
    its kept streams and observations have fully processed, so that a test waits for the n-th
    instead of sleeping and hoping it came."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.seen: List[Any] = []

    def __call__(self, answer: Any) -> None:
        with self.changed:
            self.seen.append(answer)
            self.changed.notify_all()

    def wait_count(self, count: int, timeout: float = 5.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: len(self.seen) >= count, timeout)


class ManualClock:
    """A clock the test moves (``LockClient(_clock=...)``): ``now()`` stands still until
    :meth:`advance`, which runs the timers that came due, in order, on the test's thread."""

    def __init__(self, start: float = 1000.0) -> None:
        self._lock = threading.Lock()
        self._now = start
        self._timers: List[Tuple[float, int, Scheduled]] = []
        self._order = itertools.count()

    def now(self) -> float:
        with self._lock:
            return self._now

    def at(self, when: float, fn: Callable[[], None]) -> Scheduled:
        entry = Scheduled(when, fn)
        with self._lock:
            heapq.heappush(self._timers, (when, next(self._order), entry))
        return entry

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds
            until = self._now
        while True:
            with self._lock:
                if not self._timers or self._timers[0][0] > until:
                    return
                _, _, entry = heapq.heappop(self._timers)
            if not entry.cancelled:
                entry.fn()


class Replica:
    """One fake redlockd replica: both services on a real localhost gRPC server."""

    def __init__(self, port: int = 0) -> None:
        self.fake = FakeLockService()
        self.elections = FakeElectionService()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        lock_pb2_grpc.add_LockServiceServicer_to_server(self.fake, self.server)
        election_pb2_grpc.add_ElectionServiceServicer_to_server(self.elections, self.server)
        self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")
        self.server.start()
        self.target = f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stops at once: open calls end (the client sees UNAVAILABLE or CANCELLED) and new
        connections are refused, as when a replica's process is gone."""
        self.server.stop(None).wait(5)


class FakeServerCase:
    """Mixin for unittest.TestCase: a fresh fake server, channel and client per test."""

    def setUp(self) -> None:  # noqa: D401 - unittest hook
        super().setUp()
        self.replica = Replica()
        self.replicas = [self.replica]
        self.fake = self.replica.fake
        self.elections = self.replica.elections
        self.server = self.replica.server
        self.target = self.replica.target
        self.channel = grpc.insecure_channel(self.target)
        grpc.channel_ready_future(self.channel).result(timeout=5)
        self.channels = [self.channel]
        self.answered = Answers()
        self.client = self.make_client()

    def another_replica(self) -> Replica:
        replica = Replica()
        self.replicas.append(replica)
        return replica

    def make_client(self, channel: Optional[grpc.Channel] = None, **options) -> LockClient:
        options.setdefault("retry", FAST_RETRY)
        options.setdefault("_answered", self.answered)
        return LockClient(self.channel if channel is None else channel, **options)

    def tearDown(self) -> None:
        for channel in self.channels:
            channel.close()
        for replica in self.replicas:
            replica.server.stop(None)
        super().tearDown()
