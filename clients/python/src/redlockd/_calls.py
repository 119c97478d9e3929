"""The calls a client makes for its leases and leaderships: stubs, the call timeout, the retry
policy, blocking unary calls with retries, and fire-and-forget Releases through the same
retries.

Lease, Leadership and Observation get one of these from the LockClient that made them, so none
of them imports the client (client.py imports them, never the other way round).
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable, Optional, Sequence, Set, Tuple

import grpc

from . import _tracecontext
from ._clock import SYSTEM, Clock
from ._proto import election_pb2_grpc, lock_pb2, lock_pb2_grpc
from ._pushback import DO_NOT_RETRY, jittered, pushback_of
from ._retrying import retry_wait
from .errors import from_rpc_error
from .retry import RetryPolicy

#: The test-only hook: called with each answer of a kept stream once it is processed (the
#: deadline moved, the waiters told), and with each state an observation took in.
Answered = Optional[Callable[[Any], None]]


class CallSettings:
    """What the sync and the asyncio clients share: the call timeout, the retry policy, the
    clock, and the test-only "answer processed" hook."""

    def __init__(self, call_timeout: float, retry: RetryPolicy, clock: Optional[Clock] = None,
                 answered: Answered = None) -> None:
        self.call_timeout = call_timeout
        self.retry = retry
        self.clock: Clock = SYSTEM if clock is None else clock
        self.answered = answered

    def resume_backoff(self, attempt: int) -> float:
        """How long to wait before reopening a kept stream after failed attempt ``attempt``
        (1-based): the policy's backoff (50 ms doubling up to 1 s by default), each wait a
        random time between half and all of it, so that the holders of one replica that shut
        down do not all come back at the same instant."""
        return self.retry.backoff(attempt) * random.uniform(0.5, 1.0)

    def unary_deadline(self) -> float:
        """When a unary call that starts now must be over, retries included: the call timeout."""
        return self.clock.now() + self.call_timeout

    def unary_retry_wait(self, error: Any, attempt: int, deadline: float) -> Optional[float]:
        """How long to wait before retrying a unary call that failed ``error`` on attempt
        ``attempt`` (1-based), or None: do not retry (see :mod:`redlockd._retrying`)."""
        return retry_wait(error.code(), pushback_of(error), attempt, self.retry, self.clock.now(),
                          deadline)

    def reopen_wait(self, attempt: int, error: Any) -> float:
        """How long an observer waits before reopening after ``error`` (None: a plain end): the
        server's pushback with jitter if it sent one (rule 17), else the policy's backoff; "do
        not retry" is the longest backoff, since it has no limit and nobody to fail."""
        pushback = pushback_of(error)
        if pushback is None:
            return self.retry.backoff(attempt)
        if pushback == DO_NOT_RETRY:
            return self.retry.max_backoff
        return jittered(pushback)

    def processed(self, answer: Any) -> None:
        if self.answered is not None:
            self.answered(answer)


class Calls(CallSettings):
    """One channel's stubs and the client's call settings, shared by everything it hands out."""

    def __init__(self, channel: grpc.Channel, call_timeout: float, retry: RetryPolicy,
                 clock: Optional[Clock] = None, answered: Answered = None) -> None:
        super().__init__(call_timeout, retry, clock, answered)
        channel = _tracecontext.intercept(channel)
        # The generated stubs are untyped (grpc has no type stubs): the calls on them are Any.
        self.lock_stub: Any = lock_pb2_grpc.LockServiceStub(channel)  # type: ignore[no-untyped-call]
        self.election_stub: Any = election_pb2_grpc.ElectionServiceStub(channel)  # type: ignore[no-untyped-call]
        # Fire-and-forget calls, kept referenced until done: gRPC cancels a call whose future
        # is garbage-collected.
        self._in_flight: Set[grpc.Future] = set()
        self._in_flight_lock = threading.Lock()

    def unary(self, method: Any, request: Any,
              still_worth_it: Callable[[], bool] = lambda: True,
              deadline: Optional[float] = None) -> Tuple[Any, float]:
        """A blocking unary call that is over by ``deadline`` (default: the call timeout from
        now), UNAVAILABLE retried until then while ``still_worth_it()``. Returns the answer and
        the send time of the attempt it answers."""
        if deadline is None:
            deadline = self.unary_deadline()
        attempt = 1
        while True:
            sent = self.clock.now()
            try:
                return method(request, timeout=max(0.0, deadline - sent)), sent
            except grpc.RpcError as e:
                wait = self.unary_retry_wait(e, attempt, deadline)
                if wait is None or not still_worth_it():
                    raise from_rpc_error(e) from None
            time.sleep(wait)
            attempt += 1

    def release_quietly(self, resource: str, token: str, permits: Sequence[int] = (0,)) -> None:
        """Fire and forget: a Release nobody waits for (the lease runs out by itself if it
        fails), one per permit in ``permits`` (0: the lock), one after another, UNAVAILABLE
        retried as any unary call's (so a replica going away does not keep the grant held while
        another could free it), all of it within one call timeout from now. No thread: each
        answer sends the next call, and a retry waits on the clock's timer."""
        _GiveBack(self, resource, token, tuple(permits), self.unary_deadline()).send()

    def _hold(self, future: grpc.Future) -> None:
        with self._in_flight_lock:
            self._in_flight.add(future)

    def _forget(self, future: grpc.Future) -> None:
        with self._in_flight_lock:
            self._in_flight.discard(future)


class _GiveBack:
    """One fire-and-forget give-back (:meth:`Calls.release_quietly`): the permits left, and the
    attempt of the first one."""

    def __init__(self, calls: Calls, resource: str, token: str, permits: Sequence[int],
                 deadline: float) -> None:
        self._calls = calls
        self._resource = resource
        self._token = token
        self._permits = list(permits)
        self._deadline = deadline
        self._attempt = 1

    def send(self) -> None:
        clock = self._calls.clock
        left = self._deadline - clock.now()
        if not self._permits or left <= 0:
            return
        request = lock_pb2.ReleaseRequest(resource=self._resource, token=self._token,
                                          permit=self._permits[0])
        try:
            future = self._calls.lock_stub.Release.future(request, timeout=left)
        except Exception:  # a closed channel: nothing to give back through
            return
        self._calls._hold(future)
        future.add_done_callback(self._done)

    def _done(self, future: grpc.Future) -> None:
        self._calls._forget(future)
        error = None if future.cancelled() else future.exception()
        if isinstance(error, grpc.RpcError):
            wait = self._calls.unary_retry_wait(error, self._attempt, self._deadline)
            if wait is not None:
                self._attempt += 1
                clock = self._calls.clock
                clock.at(clock.now() + wait, self.send)
                return
        # Released, not held, or not worth retrying: on to the next permit.
        self._permits.pop(0)
        self._attempt = 1
        self.send()
