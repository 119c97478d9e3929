"""The calls a client makes for its leases and leaderships: stubs, the call timeout, the retry
policy, blocking unary calls with retries, and fire-and-forget Releases.

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

    def retry_wait(self, attempt: int, error: Any) -> Optional[float]:
        """How long to wait before retrying a call that failed ``error`` on attempt ``attempt``
        (1-based): the server's pushback with jitter if it sent one (rule 17), else the policy's
        backoff; None when it said "do not retry"."""
        pushback = pushback_of(error)
        if pushback is None:
            return self.retry.backoff(attempt)
        if pushback == DO_NOT_RETRY:
            return None
        return jittered(pushback)

    def reopen_wait(self, attempt: int, error: Any) -> float:
        """How long an observer waits before reopening after ``error`` (None: a plain end): as
        :meth:`retry_wait`, but "do not retry" is the longest backoff, since it has no limit and
        nobody to fail."""
        wait = self.retry_wait(attempt, error)
        return self.retry.max_backoff if wait is None else wait

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
              still_worth_it: Callable[[], bool] = lambda: True) -> Tuple[Any, float]:
        """A blocking unary call with the call timeout, UNAVAILABLE retried by the policy while
        ``still_worth_it()``. Returns the answer and the send time of the attempt it answers."""
        attempt = 1
        while True:
            sent = self.clock.now()
            try:
                return method(request, timeout=self.call_timeout), sent
            except grpc.RpcError as e:
                wait = self.retry_wait(attempt, e)
                if (e.code() != grpc.StatusCode.UNAVAILABLE or attempt >= self.retry.max_attempts
                        or wait is None or not still_worth_it()):
                    raise from_rpc_error(e) from None
            time.sleep(wait)
            attempt += 1

    def release_quietly(self, resource: str, token: str, permits: Sequence[int] = (0,)) -> None:
        """Fire and forget: a Release nobody waits for (the lease runs out by itself if it
        fails), one per permit in ``permits`` (0: the lock). Several go one after another from
        a thread of their own, so that giving back every permit of a large semaphore is no
        burst."""
        if len(permits) > 1:
            threading.Thread(target=self._release_each, args=(resource, token, tuple(permits)),
                             name="redlockd-give-back", daemon=True).start()
            return
        try:
            future = self.lock_stub.Release.future(
                lock_pb2.ReleaseRequest(resource=resource, token=token, permit=permits[0]),
                timeout=self.call_timeout)
        except Exception:  # a closed channel: nothing to give back through
            return
        with self._in_flight_lock:
            self._in_flight.add(future)
        future.add_done_callback(self._forget)

    def _release_each(self, resource: str, token: str, permits: Sequence[int]) -> None:
        for permit in permits:
            try:
                self.lock_stub.Release(
                    lock_pb2.ReleaseRequest(resource=resource, token=token, permit=permit),
                    timeout=self.call_timeout)
            except Exception:  # not held, or unreachable: it runs out by itself
                pass

    def _forget(self, future: grpc.Future) -> None:
        with self._in_flight_lock:
            self._in_flight.discard(future)
