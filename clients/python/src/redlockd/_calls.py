"""The calls a client makes for its leases and leaderships: stubs, the call timeout, the retry
policy, unary calls with their retries and fire-and-forget Releases through the same retries,
as procedures (``_ops.py``); and, per flavour, how they are run.

Lease, Leadership and Observation get one of these from the client that made them, so none of
them imports the client (client.py imports them, never the other way round). :class:`Calls` is
the sync client's, ``aio._calls.AsyncCalls`` redlockd.aio's: they differ only in how a
procedure is run and waited on, and in the stubs' channel.
"""
from __future__ import annotations

import random
import threading
from typing import Any, Callable, Optional, Sequence, Tuple

import grpc

from . import _tracecontext
from ._clock import SYSTEM, Clock
from ._kept import KeptCore, KeptStreams, SlowestAnswer
from ._lifetime import on_a_thread
from ._ops import Call, Procedure, Sleep, T
from ._proto import election_pb2_grpc, lock_pb2, lock_pb2_grpc
from ._pushback import DO_NOT_RETRY, jittered, pushback_of
from ._retrying import retry_wait
from ._threads import Background, InFlight, ThreadStreams, run
from .errors import LeaseLost, from_rpc_error
from .retry import RetryPolicy

#: The test-only hook: called with each answer of a kept stream once it is processed (the
#: deadline moved, the waiters told), and with each state an observation took in.
Answered = Optional[Callable[[Any], None]]


class CallSettings:
    """What the sync and the asyncio clients share: the call timeout, the retry policy, the
    clock, the test-only "answer processed" hook, and the procedures of unary calls. A flavour
    adds its stubs and how it runs procedures, waits, and keeps streams."""

    def __init__(self, channel: Any, call_timeout: float, retry: RetryPolicy,
                 clock: Optional[Clock] = None, answered: Answered = None) -> None:
        self.call_timeout = call_timeout
        self.retry = retry
        self.clock: Clock = SYSTEM if clock is None else clock
        self.answered = answered
        #: Every kept grant's answer times, which each grant's silence bound follows.
        self.answer_times = SlowestAnswer()
        # The generated stubs serve grpc and grpc.aio channels alike. They are untyped (grpc has
        # no type stubs): the calls on them are Any.
        self.lock_stub: Any = lock_pb2_grpc.LockServiceStub(channel)  # type: ignore[no-untyped-call]
        self.election_stub: Any = election_pb2_grpc.ElectionServiceStub(channel)  # type: ignore[no-untyped-call]

    # --- the flavour's part ------------------------------------------------------------------

    def waiter(self, lock: "threading.Condition") -> Any:
        """What waits on a grant's state guarded by ``lock`` (see _ops.Wait)."""
        raise NotImplementedError

    def event(self) -> Any:
        """A new "lost" event: set the moment a grant is lost."""
        raise NotImplementedError

    def streams(self, core: KeptCore, lock: "threading.Condition", waiter: Any,
                open_call: Callable[..., Any]) -> KeptStreams:
        """The streams of a kept grant, ``core`` its rules."""
        raise NotImplementedError

    def background(self, procedure: Procedure[Any]) -> None:
        """Runs ``procedure`` without anyone waiting for it."""
        raise NotImplementedError

    def dispatch(self, lose: Callable[[LeaseLost], None], error: LeaseLost, what: str) -> None:
        """How a loss the deadline timer found is run (see _lifetime.Lifetime)."""
        on_a_thread(lose, error, what)

    # --- rules -------------------------------------------------------------------------------

    def resume_backoff(self, attempt: int) -> float:
        """How long to wait before reopening a kept stream after failed attempt ``attempt``
        (1-based): the policy's backoff (50 ms doubling up to 1 s by default), each wait a
        random time between half and all of it, so that the holders of one replica that shut
        down do not all come back at the same instant."""
        return self.retry.backoff(attempt) * random.uniform(0.5, 1.0)

    def unary_deadline(self) -> float:
        """When a unary call that starts now must be over, retries included: the call timeout."""
        return self.clock.now() + self.call_timeout

    def attempt_timeout(self) -> float:
        """How long one attempt of an idempotent unary call other than Acquire waits for its
        answer: half the call timeout. A replica gone silent (its connection open, nothing coming
        back) neither answers nor refuses, and the client cannot tell it from a slow one but by
        time; most calls have no ttl to derive a bound from (Leader, Describe, ForceRelease).
        Half the call timeout leaves the retry, on another replica, as long as the first attempt
        had, far above what a healthy replica takes (one Redis round)."""
        return self.call_timeout / 2

    def unary_retry_wait(self, error: Any, attempt: int, deadline: float) -> Optional[float]:
        """How long to wait before retrying a unary call that failed ``error`` on attempt
        ``attempt`` (1-based), or None: do not retry (see :mod:`redlockd._retrying`)."""
        return retry_wait(error.code(), pushback_of(error), attempt, self.retry, self.clock.now(),
                          deadline)

    def reopen_wait(self, attempt: int, pushback: Optional[float]) -> float:
        """How long an observer waits before reopening after an end with ``pushback`` (None: the
        server sent none): the pushback with jitter (rule 17), else the policy's backoff; "do
        not retry" is the longest backoff, since it has no limit and nobody to fail."""
        if pushback is None:
            return self.retry.backoff(attempt)
        if pushback == DO_NOT_RETRY:
            return self.retry.max_backoff
        return jittered(pushback)

    def processed(self, answer: Any) -> None:
        if self.answered is not None:
            self.answered(answer)

    # --- procedures --------------------------------------------------------------------------

    def unary(self, method: Any, request: Any,
              still_worth_it: Callable[[], bool] = lambda: True,
              deadline: Optional[float] = None) -> Procedure[Tuple[Any, float]]:
        """A unary call that is over by ``deadline`` (default: the call timeout from now),
        UNAVAILABLE retried until then while ``still_worth_it()``, and so is an attempt that got
        no answer within :meth:`attempt_timeout`: the answer, and the send time of the attempt
        it answers."""
        if deadline is None:
            deadline = self.unary_deadline()
        attempt = 1
        while True:
            sent = self.clock.now()
            left = max(0.0, deadline - sent)
            timeout = min(left, self.attempt_timeout())
            try:
                answer = yield Call(method, request, timeout)
                return answer, sent
            except grpc.RpcError as e:
                if (e.code() == grpc.StatusCode.DEADLINE_EXCEEDED and timeout < left
                        and self.retry.max_attempts > 1 and still_worth_it()):
                    # Cut by its own timeout, not the call's: its replica may be silent (a frozen
                    # host, a partition). round_robin puts the retry on the next one, at once.
                    attempt += 1
                    continue
                wait = self.unary_retry_wait(e, attempt, deadline)
                if wait is None or not still_worth_it():
                    raise from_rpc_error(e) from None
            yield Sleep(wait)
            attempt += 1

    def release_quietly(self, resource: str, token: str, permits: Sequence[int] = (0,)) -> None:
        """Fire and forget: a Release nobody waits for (the lease runs out by itself if it
        fails), one per permit in ``permits`` (0: the lock), one after another, UNAVAILABLE
        retried as any unary call's (so a replica going away does not keep the grant held while
        another could free it), all of it within one call timeout from now."""
        self.background(self._give_back(resource, token, tuple(permits), self.unary_deadline()))

    def _give_back(self, resource: str, token: str, permits: Sequence[int],
                   deadline: float) -> Procedure[None]:
        for permit in permits:
            request = lock_pb2.ReleaseRequest(resource=resource, token=token, permit=permit)
            try:
                yield from self.unary(self.lock_stub.Release, request, deadline=deadline)
            except Exception:  # it runs out by itself
                pass


class Calls(CallSettings):
    """The sync client's: one channel's stubs, procedures run on the calling thread."""

    def __init__(self, channel: grpc.Channel, call_timeout: float, retry: RetryPolicy,
                 clock: Optional[Clock] = None, answered: Answered = None) -> None:
        super().__init__(_tracecontext.intercept(channel), call_timeout, retry, clock, answered)
        self._in_flight = InFlight()

    @staticmethod
    def run(procedure: Procedure[T]) -> T:
        return run(procedure)

    def waiter(self, lock: "threading.Condition") -> "threading.Condition":
        return lock

    def event(self) -> threading.Event:
        return threading.Event()

    def streams(self, core: KeptCore, lock: "threading.Condition", waiter: Any,
                open_call: Callable[..., Any]) -> ThreadStreams:
        return ThreadStreams(core, lock, open_call, self.clock)

    def background(self, procedure: Procedure[Any]) -> None:
        Background(procedure, self._in_flight)
