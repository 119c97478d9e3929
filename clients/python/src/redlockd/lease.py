"""A held lock, with its local deadline, renewals and loss callbacks."""
from __future__ import annotations

import logging
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Callable, List, Optional, Type

import grpc

from . import _durations
from ._keeper import Keeper
from ._proto import lock_pb2
from ._scheduler import SCHEDULER, Scheduled
from .errors import LeaseLost, LockServiceError

if TYPE_CHECKING:  # pragma: no cover
    from .client import LockClient

__all__ = ["Lease", "guard"]

_log = logging.getLogger("redlockd")

#: The guard never exceeds this: a long ttl should not give up much of its validity.
MAX_GUARD = 0.1

LostCallback = Callable[[LeaseLost], None]


def guard(ttl: float) -> float:
    """How long before its deadline a lease stops counting as valid: ttl/20, at most 100 ms.

    The loss is then reported before the deadline itself (the moment another holder may be
    granted the lock) has passed, even by a timer that runs a little late.
    """
    return min(ttl / 20, MAX_GUARD)


class Lease:
    """A held lock on ``resource``. Use it as a context manager: leaving the block releases it.

    The local deadline is the send time of the request that granted or last renewed the lease
    plus the validity the server returned, on ``time.monotonic()``. The lease counts as valid
    until a guard before it, and is reported lost then unless a renewal moved it. The token
    stays inside: it is in no ``repr``/``str`` and no error message.
    """

    def __init__(self, client: "LockClient", resource: str, token: str, fencing_token: int,
                 ttl: float, deadline: float) -> None:
        self._client = client
        self._resource = resource
        self._token = token
        self._fencing_token = fencing_token
        self._ttl = ttl
        self._guard = guard(ttl)
        self._deadline = deadline
        self._lock = threading.RLock()
        self._released = False
        self._lost: Optional[LeaseLost] = None
        self._callbacks: List[LostCallback] = []
        self._keeper: Optional[Keeper] = None
        self._check: Optional[Scheduled] = None
        with self._lock:
            self._schedule_check()

    # --- what the holder reads -------------------------------------------------------------

    @property
    def resource(self) -> str:
        return self._resource

    @property
    def fencing_token(self) -> int:
        """Strictly increases per resource across grants: send it with every write the lock
        protects, so the resource can refuse a late write from an earlier holder."""
        return self._fencing_token

    @property
    def valid(self) -> bool:
        """True until a guard before the local deadline (unless a renewal moved it), the loss,
        or the release."""
        return (not self._released and self._lost is None
                and time.monotonic() < self._deadline - self._guard)

    @property
    def remaining(self) -> float:
        """Seconds left while valid (up to the guard before the deadline); 0 once not valid."""
        if not self.valid:
            return 0.0
        return max(0.0, self._deadline - self._guard - time.monotonic())

    @property
    def deadline(self) -> float:
        """The local deadline on ``time.monotonic()``: send time + validity, without the guard.
        Another holder may be granted the lock after it."""
        return self._deadline

    @property
    def lost_error(self) -> Optional[LeaseLost]:
        """Why the lease was lost, or None while it is not."""
        return self._lost

    # --- what the holder does --------------------------------------------------------------

    def extend(self, ttl: _durations.Seconds) -> "Lease":
        """Renews the lease for ``ttl`` from now. UNAVAILABLE is retried while the lease is
        still valid. Raises :class:`LeaseLost` when the lease is no longer held."""
        ttl_s = _durations.seconds(ttl)
        with self._lock:
            if self._released:
                raise LeaseLost(grpc.StatusCode.FAILED_PRECONDITION,
                                f"lease on resource '{self._resource}' was released")
            if self._lost is not None:
                raise self._lost
        request = lock_pb2.ExtendRequest(
            resource=self._resource, token=self._token, ttl=_durations.to_proto(ttl_s))
        try:
            response, sent = self._client._unary(
                self._client._stub.Extend, request, still_worth_it=lambda: self.valid)
        except LockServiceError as e:
            if e.code == grpc.StatusCode.NOT_FOUND:
                error = LeaseLost(e.code, e.details)
                self._lose(error)
                raise (self._lost or error) from None
            raise
        with self._lock:
            if self._released or self._lost is not None:
                return self
            self._ttl = ttl_s
            self._guard = guard(ttl_s)
            self._deadline = sent + _durations.from_proto(response.lease.validity)
            self._schedule_check()
        return self

    def keep_alive(self) -> "Lease":
        """Keeps the lease alive on a KeepAlive stream until it is released or lost: a renewal
        every ttl/4, each moving the deadline. If the stream ends or the deadline passes
        without a renewal, the :meth:`on_lost` callbacks run."""
        with self._lock:
            if self._keeper is None and not self._released and self._lost is None:
                self._keeper = Keeper(self, self._client._stub, self._token, self._ttl)
        return self

    def on_lost(self, callback: LostCallback) -> "Lease":
        """Calls ``callback(error)`` once, from a client thread, when the lease is lost; at once
        (on this thread) if it already is. Keep it short: it runs on the client's threads."""
        with self._lock:
            error = self._lost
            if error is None:
                self._callbacks.append(callback)
                return self
        _run_callback(callback, error)
        return self

    def release(self) -> bool:
        """Releases the lease and stops its keep-alive. Idempotent: True only on the call that
        released a lease a quorum still held.

        A kept lease is released by half-closing its stream (the server releases and ends it
        OK, or NOT_FOUND when it was not held); if the stream fails on its way out, a plain
        Release call follows. Raises :class:`LockServiceError` when no answer came.
        """
        with self._lock:
            if self._released:
                return False
            self._released = True
            keeper = self._keeper
            lost = self._lost
            self._cancel_check()
        if keeper is not None and lost is None:
            ending = keeper.half_close(self._client._call_timeout)
            if ending is None:
                keeper.cancel()
            elif ending[0] == grpc.StatusCode.OK:
                return True
            elif ending[0] == grpc.StatusCode.NOT_FOUND:
                return False
            # The stream failed on its way out: fall back to a plain Release.
        request = lock_pb2.ReleaseRequest(resource=self._resource, token=self._token)
        response, _ = self._client._unary(self._client._stub.Release, request)
        return response.released

    def close(self) -> None:
        """Releases; never raises for a lease that expired or could not be reached (it runs
        out by itself at its ttl)."""
        try:
            self.release()
        except LockServiceError as e:
            _log.debug("release of resource '%s' failed: %s", self._resource, e)

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "released" if self._released else "lost" if self._lost is not None else (
            "valid" if self.valid else "expired")
        return (f"Lease(resource={self._resource!r}, fencing_token={self._fencing_token}, "
                f"{state}, remaining={self.remaining * 1000:.0f} ms)")

    __str__ = __repr__

    # --- called by the keeper and the timer ------------------------------------------------

    def _advance(self, candidate: float) -> None:
        """A renewal's deadline: moves the lease's forward only (an answer reporting an earlier
        renewal, or jeopardy, may arrive after a later one). The pending check sees it when it
        runs, so nothing is rescheduled here."""
        with self._lock:
            if not self._released and self._lost is None and candidate > self._deadline:
                self._deadline = candidate

    def _lose(self, error: LeaseLost) -> None:
        """Marks the lease lost (once) and runs the callbacks on this thread."""
        callbacks = self._mark_lost(error)
        for callback in callbacks or ():
            _run_callback(callback, error)

    def _mark_lost(self, error: LeaseLost) -> Optional[List[LostCallback]]:
        with self._lock:
            if self._released or self._lost is not None:
                return None
            self._lost = error
            keeper = self._keeper
            self._cancel_check()
            callbacks, self._callbacks = self._callbacks, []
        if keeper is not None:
            keeper.cancel()
        return callbacks

    def _schedule_check(self) -> None:  # under self._lock
        self._cancel_check()
        self._check = SCHEDULER.at(self._deadline - self._guard, self._check_deadline)

    def _cancel_check(self) -> None:  # under self._lock
        if self._check is not None:
            self._check.cancel()
            self._check = None

    def _check_deadline(self) -> None:
        """On the timer thread: lost when the guarded deadline came without a renewal."""
        with self._lock:
            if self._released or self._lost is not None:
                return
            due = self._deadline - self._guard
            if time.monotonic() < due:  # renewed meanwhile: check again then
                self._check = SCHEDULER.at(due, self._check_deadline)
                return
            error = LeaseLost(grpc.StatusCode.DEADLINE_EXCEEDED,
                              f"lease on resource '{self._resource}' ran out: its local deadline "
                              f"came within {self._guard * 1000:.0f} ms without a renewal")
        callbacks = self._mark_lost(error)
        if callbacks:
            # Not on the timer thread: a slow callback must not delay other leases' checks.
            threading.Thread(target=lambda: [_run_callback(c, error) for c in callbacks],
                             name=f"redlockd-lost {self._resource}", daemon=True).start()


def _run_callback(callback: LostCallback, error: LeaseLost) -> None:
    try:
        callback(error)
    except Exception:
        _log.exception("a lease-lost callback failed")
