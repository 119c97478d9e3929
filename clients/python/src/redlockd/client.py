"""LockClient: hands out leases and keeps the token, the deadlines and the retries to itself."""
from __future__ import annotations

import os
import socket
import time
from typing import Any, Callable, Optional, Tuple, TypeVar, overload

import grpc

from . import _durations
from ._acquiring import AcquirePlan
from ._calls import Answered, Calls
from ._clock import Clock
from ._proto import election_pb2
from .election import Leader, LeaderStream, Leadership, Observation, campaign
from .errors import LeaseLost, LockNotAcquired
from .lease import Lease
from .retry import RetryPolicy

__all__ = ["LockClient"]

T = TypeVar("T")


def _default_owner() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


class LockClient:
    """The redlockd client.

    ::

        client = LockClient(grpc.insecure_channel("localhost:50051"))
        with client.acquire("orders/42", ttl=10, wait=2) as lease:
            store.write(order, fencing_token=lease.fencing_token)

    Several replicas: give it a channel from :func:`redlockd.channel`, which spreads the calls
    over them (round_robin), so that a kept stream whose replica goes away is reopened on
    another one.

    The client never creates or closes the channel. It makes each lease's token itself, so an
    Acquire retried after UNAVAILABLE or DEADLINE_EXCEEDED carries the same token: the server
    refreshes the lease it may already have granted instead of granting a second one. Safe to
    share between threads.

    Durations are seconds (``float``) or ``datetime.timedelta``.
    """

    def __init__(self, channel: grpc.Channel, *, call_timeout: _durations.Seconds = 5.0,
                 retry: RetryPolicy = RetryPolicy(), owner: Optional[str] = None,
                 _clock: Optional[Clock] = None, _answered: Answered = None) -> None:
        # _clock and _answered are for tests only: a clock they move by hand, and a hook called
        # with each answer once processed (deadline moved, waiters told, callback returned).
        self._call_timeout = _durations.seconds(call_timeout)
        self._retry = retry
        self._calls = Calls(channel, self._call_timeout, retry, _clock, _answered)
        self._clock = self._calls.clock
        self._stub = self._calls.lock_stub
        self._election_stub = self._calls.election_stub
        self._owner = _default_owner() if owner is None else owner

    @property
    def owner(self) -> str:
        return self._owner

    @property
    def call_timeout(self) -> float:
        return self._call_timeout

    @property
    def retry(self) -> RetryPolicy:
        return self._retry

    def __repr__(self) -> str:
        return (f"LockClient(owner={self._owner!r}, call_timeout={self._call_timeout}, "
                f"retry={self._retry})")

    __str__ = __repr__

    # --- acquiring -----------------------------------------------------------------------------

    def acquire(self, resource: str, ttl: _durations.Seconds,
                wait: _durations.Seconds = 0.0) -> Lease:
        """Takes the lock, waiting up to ``wait`` while someone else holds it.

        Raises :class:`LockNotAcquired` when someone else still holds it after ``wait``, and
        :class:`LockServiceError` for every other failure. An Acquire given up on (retries
        exhausted, or interrupted, e.g. by KeyboardInterrupt) sends a Release of its token in
        the background, since the server may have granted it after all.
        """
        plan = AcquirePlan(resource, _durations.seconds(ttl), _durations.seconds(wait),
                           self._owner, self._call_timeout, self._retry, self._clock,
                           self._release_quietly)
        try:
            while True:
                request, timeout = plan.request()
                future = self._stub.Acquire.future(request, timeout=timeout)
                try:
                    response = future.result()
                except grpc.RpcError as e:
                    time.sleep(plan.failed(e))
                    continue
                except BaseException:
                    future.cancel()
                    raise
                granted = plan.answered(response)
                if granted is not None:
                    fencing_token, deadline = granted
                    return Lease(self._calls, resource, plan.token, fencing_token, plan.ttl,
                                 deadline)
        except BaseException:
            plan.abandon()
            raise

    def try_acquire(self, resource: str, ttl: _durations.Seconds) -> Optional[Lease]:
        """One attempt without waiting: the lease, or None when someone else holds the lock."""
        try:
            return self.acquire(resource, ttl, 0.0)
        except LockNotAcquired:
            return None

    def with_lock(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds,
                  fn: Callable[[Lease], T]) -> T:
        """Runs ``fn(lease)`` while holding the lock and returns its result.

        Acquires (waiting up to ``wait``), keeps the lease alive while ``fn`` runs, and releases
        afterwards. Python cannot interrupt ``fn``: it should check ``lease.valid`` before each
        step it protects. If the lease was lost meanwhile, :class:`LeaseLost` is raised after
        ``fn`` returns (chained to ``fn``'s own exception, if it raised one).
        """
        lease = self.acquire(resource, ttl, wait)
        try:
            lease.keep_alive()
            try:
                result = fn(lease)
            except BaseException as work_failed:
                lost = lease.lost_error
                if lost is not None and lost is not work_failed:
                    raise lost from work_failed
                raise
            lost = lease.lost_error
            if lost is not None:
                raise lost
            return result
        finally:
            lease.close()

    # --- elections ---------------------------------------------------------------------------

    def campaign(self, election: str, value: str, ttl: _durations.Seconds,
                 wait: Optional[_durations.Seconds] = None) -> Leadership:
        """Runs for leader of ``election`` with ``value`` (what Leader and Observe report while
        it leads) and blocks until it leads, or until ``wait`` passes (None: as long as it takes).

        The candidacy lives on one Campaign stream, renewed every ttl/4 from the start (while
        waiting too); the returned :class:`Leadership` is kept alive on it. The candidate's
        token is made here: a stream that breaks is reopened with it (a waiting candidate
        campaigns again as the same candidacy, a leader resumes with the same term). Raises
        :class:`LockNotAcquired` (``ABORTED``) when not leading after ``wait`` (the candidacy is
        withdrawn), and :class:`LockServiceError` with the stream's status when it ends before
        leading. ``wait`` counts from when the stream opens, so give it a few round trips at
        least.
        """
        return campaign(self._calls, election, value, ttl, wait)

    def leader(self, election: str) -> Optional[Leader]:
        """The current leader of ``election`` (value and term), or None when it has none.
        UNAVAILABLE (too few nodes answered to tell) is retried by the policy."""
        response, _ = self._unary(self._election_stub.Leader,
                                  election_pb2.LeaderRequest(election=election))
        if not response.HasField("leader"):
            return None
        return Leader(value=response.leader.value, term=response.leader.term)

    def lead(self, election: str, value: str, ttl: _durations.Seconds,
             work: Callable[[Leadership], T], requeue: bool = False) -> T:
        """Runs ``work(leadership)`` while leading ``election`` and returns its result.

        Campaigns (as long as it takes), then runs ``work`` on this thread. A thread cannot be
        interrupted: ``work`` polls ``leadership.lost`` (a :class:`threading.Event`, set the
        moment the leadership is lost) or waits on it, and returns when it is set. When
        ``work`` returns while still leading, resigns and returns its result. When the
        leadership was lost meanwhile: raises the loss (:class:`LeaseLost`) once ``work``
        returned, or, with ``requeue``, campaigns again and runs ``work`` again. ``work``
        raising an error of its own: resigns and re-raises it (no requeue). An interrupt
        (KeyboardInterrupt) while campaigning withdraws the candidacy.
        """
        while True:
            with self.campaign(election, value, ttl) as leadership:
                try:
                    result = work(leadership)
                except LeaseLost as e:
                    if e is not leadership.lost_error:
                        raise
                    # work gave up on the loss it was told of: the loss, as below
                else:
                    if leadership.lost_error is None:
                        return result
                lost = leadership.lost_error
                assert lost is not None
                if not requeue:
                    raise lost

    @overload
    def observe(self, election: str) -> LeaderStream: ...

    @overload
    def observe(self, election: str, callback: Callable[[Optional[Leader]], None]) -> Observation: ...

    def observe(self, election: str, callback: Optional[Callable[[Optional[Leader]], None]] = None
                ) -> "LeaderStream | Observation":
        """The current leader of ``election`` (or None), then every change.

        Without ``callback``: a :class:`LeaderStream`, an iterator that is also a context
        manager (closing it ends the iteration)::

            with client.observe("scheduler") as changes:
                for leader in changes: ...

        With ``callback``: calls it from a thread of the observation's own, until the returned
        :class:`Observation` is closed. Either way the stream is reopened when it ends
        (backoff as the retry policy, no limit)."""
        if callback is None:
            return LeaderStream(self._calls, election)
        return Observation(self._calls, election, callback)

    # --- plumbing ------------------------------------------------------------------------------

    def _unary(self, method: Any, request: Any,
               still_worth_it: Callable[[], bool] = lambda: True) -> Tuple[Any, float]:
        return self._calls.unary(method, request, still_worth_it)

    def _release_quietly(self, resource: str, token: str) -> None:
        self._calls.release_quietly(resource, token)
