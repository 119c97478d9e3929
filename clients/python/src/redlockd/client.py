"""LockClient: hands out leases and keeps the token, the deadlines and the retries to itself."""
from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import Any, Callable, ContextManager, Iterator, Optional, Tuple, TypeVar, overload

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
        return self._acquire(resource, ttl, wait, 0)

    def acquire_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                       wait: _durations.Seconds = 0.0) -> Lease:
        """Takes one of ``permits`` permits of the semaphore ``resource`` (at most ``permits``
        holders at once), waiting up to ``wait`` while every permit is held.

        The same :class:`Lease` as :meth:`acquire`'s, its :attr:`Lease.permit` saying which
        permit (1..N); extend, keep it alive and release it as a lock. A semaphore and a lock on
        the same name do not exclude each other. Every caller of one semaphore must give the
        same ``permits`` (at most 1024): another number fails ``FAILED_PRECONDITION`` while any
        permit is held. Raises as :meth:`acquire`; an acquire given up on gives its token back
        (every permit's, when no answer said which one it got).
        """
        return self._acquire(resource, ttl, wait, check_permits(permits))

    def _acquire(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds,
                 permits: int) -> Lease:
        plan = AcquirePlan(resource, _durations.seconds(ttl), _durations.seconds(wait),
                           self._owner, self._call_timeout, self._retry, self._clock,
                           self._calls.release_quietly, permits)
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
                                 deadline, plan.permit)
        except BaseException:
            plan.abandon()
            raise

    def try_acquire(self, resource: str, ttl: _durations.Seconds) -> Optional[Lease]:
        """One attempt without waiting: the lease, or None when someone else holds the lock."""
        try:
            return self.acquire(resource, ttl, 0.0)
        except LockNotAcquired:
            return None

    def try_acquire_permit(self, resource: str, permits: int,
                           ttl: _durations.Seconds) -> Optional[Lease]:
        """One attempt without waiting: a permit's lease, or None when every permit is held."""
        try:
            return self.acquire_permit(resource, permits, ttl, 0.0)
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
        return _run_kept(self.acquire(resource, ttl, wait), fn)

    @overload
    def with_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                    wait: _durations.Seconds = 0.0) -> "ContextManager[Lease]": ...

    @overload
    def with_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                    wait: _durations.Seconds, fn: Callable[[Lease], T]) -> T: ...

    def with_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                    wait: _durations.Seconds = 0.0,
                    fn: Optional[Callable[[Lease], T]] = None) -> "T | ContextManager[Lease]":
        """Holds one of ``permits`` permits of ``resource`` (see :meth:`acquire_permit`), kept
        alive, while work runs, and releases it afterwards::

            with client.with_permit("partner-api", 8, ttl=10, wait=30) as lease:
                call_partner(fencing_token=lease.fencing_token)

        If the lease was lost meanwhile, :class:`LeaseLost` is raised when the block ends
        (chained to the block's own exception, if it raised one): the work should check
        ``lease.valid`` before each step it protects. With ``fn``, as :meth:`with_lock`: runs
        ``fn(lease)`` that way and returns its result.
        """
        if fn is None:
            return _kept(lambda: self.acquire_permit(resource, permits, ttl, wait))
        return _run_kept(self.acquire_permit(resource, permits, ttl, wait), fn)

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



def check_permits(permits: int) -> int:
    """A semaphore's N as the caller gave it: a positive int (0 would ask for a lock). Above
    1024 is the server's to refuse (INVALID_ARGUMENT), so that the bound lives in one place."""
    if isinstance(permits, bool) or not isinstance(permits, int) or permits < 1:
        raise ValueError(f"permits must be a positive int, not {permits!r}")
    return permits


def _run_kept(lease: Lease, fn: Callable[[Lease], T]) -> T:
    """with_lock's and with_permit's work: ``fn(lease)`` with the lease kept alive, released
    afterwards; the loss raised once ``fn`` returned."""
    with _kept(lambda: lease) as kept:
        return fn(kept)


@contextlib.contextmanager
def _kept(acquire: Callable[[], Lease]) -> Iterator[Lease]:
    """The lease ``acquire()`` returns, kept alive in the block and released after it; its loss
    raised when the block ends (chained to the block's exception, if it raised one)."""
    lease = acquire()
    try:
        lease.keep_alive()
        try:
            yield lease
        except BaseException as work_failed:
            lost = lease.lost_error
            if lost is not None and lost is not work_failed:
                raise lost from work_failed
            raise
        lost = lease.lost_error
        if lost is not None:
            raise lost
    finally:
        lease.close()
