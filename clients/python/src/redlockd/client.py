"""LockClient: hands out leases and keeps the token, the deadlines and the retries to itself."""
from __future__ import annotations

import contextlib
import os
import socket
from typing import Callable, ContextManager, Generic, Iterator, Optional, Tuple, Type, TypeVar, overload

import grpc

from . import _durations
from ._acquiring import AcquirePlan, acquiring
from ._calls import Answered, Calls, CallSettings
from ._clock import Clock
from ._ops import Procedure
from ._proto import election_pb2
from ._threads import run
from .election import Leader, LeaderStream, Leadership, Observation, _leader_of, campaigning
from .errors import LeaseLost, LockNotAcquired
from .lease import Lease, LeaseState
from .retry import RetryPolicy

__all__ = ["LockClient"]

T = TypeVar("T")
L = TypeVar("L", bound=LeaseState)

#: What a granted lease is made of: resource, token, fencing token, ttl, deadline, permit.
Granted = Tuple[str, str, int, float, float, int]


def _default_owner() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


def check_permits(permits: int) -> int:
    """A semaphore's N as the caller gave it: a positive int (0 would ask for a lock). Above
    1024 is the server's to refuse (INVALID_ARGUMENT), so that the bound lives in one place."""
    if isinstance(permits, bool) or not isinstance(permits, int) or permits < 1:
        raise ValueError(f"permits must be a positive int, not {permits!r}")
    return permits


class ClientBase(Generic[L]):
    """What the sync and the asyncio clients share: their settings, and the procedures of the
    calls they make themselves. ``lease``: the flavour's lease class."""

    def __init__(self, calls: CallSettings, owner: Optional[str], lease: Type[L]) -> None:
        self._calls = calls
        self._owner = _default_owner() if owner is None else owner
        self._lease_class = lease

    @property
    def owner(self) -> str:
        """What Describe shows beside this client's leases (default: host and pid)."""
        return self._owner

    @property
    def call_timeout(self) -> float:
        """The deadline of each call, in seconds (an Acquire gets its wait on top)."""
        return self._calls.call_timeout

    @property
    def retry(self) -> RetryPolicy:
        return self._calls.retry

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(owner={self._owner!r}, "
                f"call_timeout={self.call_timeout}, retry={self.retry})")

    __str__ = __repr__

    def _acquiring(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds,
                   permits: int) -> Procedure[Granted]:
        """An acquire: what its lease is made of."""
        plan = AcquirePlan(resource, _durations.seconds(ttl), _durations.seconds(wait),
                           self._owner, self._calls.call_timeout, self._calls.retry,
                           self._calls.clock, self._calls.release_quietly, permits)
        fencing_token, deadline = yield from acquiring(plan, self._calls.lock_stub.Acquire)
        return resource, plan.token, fencing_token, plan.ttl, deadline, plan.permit

    def _trying(self, resource: str, ttl: _durations.Seconds,
                permits: int) -> Procedure[Optional[Granted]]:
        """One attempt without waiting: what its lease is made of, or None when someone else
        holds it."""
        try:
            granted: Granted = yield from self._acquiring(resource, ttl, 0.0, permits)
        except LockNotAcquired:
            return None
        return granted

    def _lease(self, granted: Granted) -> L:
        return self._lease_class(self._calls, *granted)

    def _lease_or_none(self, granted: Optional[Granted]) -> Optional[L]:
        return None if granted is None else self._lease(granted)

    def _leader(self, election: str) -> Procedure[Optional[Leader]]:
        response, _ = yield from self._calls.unary(self._calls.election_stub.Leader,
                                                   election_pb2.LeaderRequest(election=election))
        return _leader_of(response.leader) if response.HasField("leader") else None


class LockClient(ClientBase[Lease]):
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
        super().__init__(Calls(channel, _durations.seconds(call_timeout), retry, _clock,
                               _answered), owner, Lease)

    # --- acquiring -----------------------------------------------------------------------------

    def acquire(self, resource: str, ttl: _durations.Seconds,
                wait: _durations.Seconds = 0.0) -> Lease:
        """Takes the lock, waiting up to ``wait`` while someone else holds it.

        Raises :class:`LockNotAcquired` when someone else still holds it after ``wait``, and
        :class:`LockServiceError` for every other failure. An Acquire given up on (retries
        exhausted, or interrupted, e.g. by KeyboardInterrupt) sends a Release of its token in
        the background, since the server may have granted it after all.
        """
        return self._lease(run(self._acquiring(resource, ttl, wait, 0)))

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
        return self._lease(run(self._acquiring(resource, ttl, wait, check_permits(permits))))

    def try_acquire(self, resource: str, ttl: _durations.Seconds) -> Optional[Lease]:
        """One attempt without waiting: the lease, or None when someone else holds the lock."""
        return self._lease_or_none(run(self._trying(resource, ttl, 0)))

    def try_acquire_permit(self, resource: str, permits: int,
                           ttl: _durations.Seconds) -> Optional[Lease]:
        """One attempt without waiting: a permit's lease, or None when every permit is held."""
        return self._lease_or_none(run(self._trying(resource, ttl, check_permits(permits))))

    @overload
    def with_lock(self, resource: str, ttl: _durations.Seconds,
                  wait: _durations.Seconds = 0.0) -> "ContextManager[Lease]": ...

    @overload
    def with_lock(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds,
                  fn: Callable[[Lease], T]) -> T: ...

    def with_lock(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds = 0.0,
                  fn: Optional[Callable[[Lease], T]] = None) -> "T | ContextManager[Lease]":
        """Holds the lock, kept alive, while work runs, and releases it afterwards::

            with client.with_lock("orders/42", ttl=10, wait=2) as lease:
                store.write(order, fencing_token=lease.fencing_token)

        Acquires (waiting up to ``wait``), keeps the lease alive in the block, and releases
        after it. Python cannot interrupt the block: it should check ``lease.valid`` (or
        ``lease.lost``) before each step it protects. If the lease was lost meanwhile,
        :class:`LeaseLost` is raised when the block ends (chained to the block's own exception,
        if it raised one). With ``fn``: runs ``fn(lease)`` that way and returns its result.
        """
        return self._kept_while(lambda: self.acquire(resource, ttl, wait), fn)

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
        alive, while work runs, and releases it afterwards, as :meth:`with_lock`::

            with client.with_permit("partner-api", 8, ttl=10, wait=30) as lease:
                call_partner(fencing_token=lease.fencing_token)
        """
        return self._kept_while(lambda: self.acquire_permit(resource, permits, ttl, wait), fn)

    @staticmethod
    def _kept_while(acquire: Callable[[], Lease],
                    fn: Optional[Callable[[Lease], T]]) -> "T | ContextManager[Lease]":
        if fn is None:
            return _kept(acquire)
        with _kept(acquire) as lease:
            return fn(lease)

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
        return run(campaigning(self._calls, election, value, ttl, wait, Leadership))

    def leader(self, election: str) -> Optional[Leader]:
        """The current leader of ``election`` (value and term), or None when it has none.
        UNAVAILABLE (too few nodes answered to tell) is retried by the policy."""
        return run(self._leader(election))

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
        stream = LeaderStream(self._calls, election)
        return stream if callback is None else Observation(stream, callback)


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
