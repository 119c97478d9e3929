"""A held lock, with its local deadline, renewals and loss callbacks.

:class:`LeaseState` is what a lease is and does, for the sync :class:`Lease` and redlockd.aio's
``AsyncLease`` alike: its rules, and its waits written once as procedures (``_ops.py``). The two
classes only run those procedures, blocking or awaited.
"""
from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import Any, Callable, Optional, Type, TypeVar

import grpc

from . import _durations
from ._calls import CallSettings
from ._kept import KeptCore, KeptStreams, silence_bound
from ._lifetime import Lifetime, stream_loss
from ._ops import Procedure
from ._proto import lock_pb2
from ._threads import run
from .errors import LeaseLost, LockServiceError

__all__ = ["Lease", "LeaseState"]

_log = logging.getLogger("redlockd")

LostCallback = Callable[[LeaseLost], None]
L = TypeVar("L", bound="LeaseState")


class LeaseState:
    """What a lease is, for the sync :class:`Lease` and the asyncio one alike: the resource,
    token and fencing token, the lifetime (deadline, guard, loss), what its KeepAlive stream
    sends and does with the answers, and the procedures of extend and release."""

    def __init__(self, calls: CallSettings, resource: str, token: str, fencing_token: int,
                 ttl: float, deadline: float, permit: int = 0) -> None:
        self._calls = calls
        self._resource = resource
        self._token = token
        self._fencing_token = fencing_token
        self._permit = permit
        self._ttl = ttl  # what the KeepAlive requests carry
        self._lock = threading.Condition(threading.RLock())
        self._waiter = calls.waiter(self._lock)
        self._lost_event = calls.event()
        self._released = False
        self._keeper: Optional[KeptStreams] = None  # the KeepAlive stream, once kept
        self._life = Lifetime(self._what(), ttl, deadline, self._lock, self._lost_now,
                              calls.clock, calls.dispatch, self._waiter.notify_all)

    # --- what the holder reads -------------------------------------------------------------

    @property
    def resource(self) -> str:
        return self._resource

    @property
    def permit(self) -> int:
        """Which of the semaphore's N permits this lease holds (1..N); 0 for a lock."""
        return self._permit

    @property
    def fencing_token(self) -> int:
        """Strictly increases per resource across grants (per permit, for a permit): send it
        with every write the lock protects, so the resource can refuse a late write from an
        earlier holder."""
        return self._fencing_token

    @property
    def valid(self) -> bool:
        """True until a guard before the local deadline (unless a renewal moved it), the loss,
        or the release."""
        return self._life.valid()

    @property
    def remaining(self) -> float:
        """Seconds left while valid (up to the guard before the deadline); 0 once not valid."""
        return self._life.remaining()

    @property
    def deadline(self) -> float:
        """The local deadline on ``time.monotonic()``: send time + validity, without the guard.
        Another holder may be granted the lock after it."""
        return self._life.deadline

    @property
    def ttl(self) -> float:
        """The ttl of the latest grant, Extend or (kept) ttl change, in seconds."""
        return self._life.ttl

    @property
    def lost_error(self) -> Optional[LeaseLost]:
        """Why the lease was lost, or None while it is not."""
        return self._life.lost

    def on_lost(self: L, callback: LostCallback) -> L:
        """Calls ``callback(error)`` once when the lease is lost, at once (on this thread) if it
        already is: from a client thread (on the event loop in redlockd.aio). Keep it short."""
        self._life.on_lost(callback)
        return self

    def keep_alive(self: L) -> L:
        """Keeps the lease alive on a KeepAlive stream until it is released or lost: a renewal
        every ttl/4, each moving the deadline. A stream that breaks (a replica shutting down,
        a lost connection) or goes silent is reopened with the same token, on any replica the
        channel reaches, until the lease's guarded deadline. If the server says the lease is
        gone, or the deadline passes without a renewal, the :meth:`on_lost` callbacks run. In
        redlockd.aio, call it on the loop: the stream is read by a task."""
        with self._lock:
            if self._keeper is not None or self._life.over():
                return self
            core = KeptCore(f"KeepAlive of resource '{self._resource}'", self._calls.clock,
                            self._request, self._period, self._answer, self._stream_ended,
                            lambda failures: self._life.valid(), self._calls.resume_backoff,
                            self._silence, self._calls.answered, self._calls.answer_times)
            keeper = self._keeper = self._calls.streams(core, self._lock, self._waiter,
                                                        self._calls.lock_stub.KeepAlive)
        keeper.start()
        return self

    def __repr__(self) -> str:
        state = "released" if self._released else "lost" if self._life.lost is not None else (
            "valid" if self.valid else "expired")
        permit = f"permit={self._permit}, " if self._permit else ""
        return (f"{type(self).__name__}(resource={self._resource!r}, {permit}"
                f"fencing_token={self._fencing_token}, {state}, "
                f"remaining={self.remaining * 1000:.0f} ms)")

    __str__ = __repr__

    def _what(self) -> str:
        """The lease in messages: "lease on resource 'r'", or "lease on permit 2 of resource
        'r'"."""
        if self._permit:
            return f"lease on permit {self._permit} of resource '{self._resource}'"
        return f"lease on resource '{self._resource}'"

    # --- procedures --------------------------------------------------------------------------

    def _extend(self, ttl: _durations.Seconds) -> Procedure[None]:
        ttl_s = _durations.seconds(ttl)
        with self._lock:
            self._raise_if_over()
            keeper = self._keeper
        if keeper is not None:
            yield from self._extend_kept(keeper, ttl_s)
            return
        request = lock_pb2.ExtendRequest(
            resource=self._resource, token=self._token, ttl=_durations.to_proto(ttl_s),
            permit=self._permit)
        try:
            response, sent = yield from self._calls.unary(
                self._calls.lock_stub.Extend, request, still_worth_it=lambda: self.valid)
        except LockServiceError as e:
            if e.code == grpc.StatusCode.NOT_FOUND:
                error = LeaseLost(e.code, e.details)
                self._life.lose(error)
                raise (self._life.lost or error) from None
            raise
        with self._lock:
            if self._keeper is not None:  # kept meanwhile: its stream says the ttl from now on
                self._ttl = ttl_s
            self._life.set(ttl_s, sent + _durations.from_proto(response.lease.validity))

    def _extend_kept(self, keeper: KeptStreams, ttl: float) -> Procedure[None]:
        """The new ttl through the stream (rule 15): applied to every request from the next one,
        which goes out at once and cuts the deadline when it does."""
        def apply() -> None:
            self._ttl = ttl

        def on_sent(sequence: int, sent: float) -> None:
            self._life.change_ttl(ttl, sent)

        pending = keeper.request(apply, on_sent, floor=True)
        answered = yield from keeper.answered(pending, self._calls.call_timeout, self._life.over)
        with self._lock:
            self._raise_if_over()
        if not answered:
            raise LockServiceError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"{self._what()}: no answer to the ttl change within "
                f"{self._calls.call_timeout * 1000:.0f} ms")

    def _release(self) -> Procedure[bool]:
        with self._lock:
            if self._released:
                return False
            self._released = True
            lost = self._life.finish()
            keeper = self._keeper
        if keeper is not None and lost is None:
            # The release's first attempt, held to an attempt's timeout: a stream on a replica
            # gone silent since its last answer never ends, and the Release below goes elsewhere.
            ending = yield from keeper.half_close(self._calls.attempt_timeout())
            if ending is None:
                keeper.cancel()
            elif ending[0] == grpc.StatusCode.OK:
                return True
            elif ending[0] == grpc.StatusCode.NOT_FOUND:
                return False
            # The stream failed on its way out: fall back to a plain Release.
        request = lock_pb2.ReleaseRequest(resource=self._resource, token=self._token,
                                          permit=self._permit)
        response, _ = yield from self._calls.unary(self._calls.lock_stub.Release, request)
        return bool(response.released)

    def _close(self) -> Procedure[None]:
        try:
            yield from self._release()
        except LockServiceError as e:
            _log.debug("release of resource '%s' failed: %s", self._resource, e)

    # --- the stream's side -------------------------------------------------------------------

    def _raise_if_over(self) -> None:  # under self._lock
        if self._released:
            raise LeaseLost(grpc.StatusCode.FAILED_PRECONDITION, f"{self._what()} was released")
        if self._life.lost is not None:
            raise self._life.lost

    def _request(self, sequence: int, first: bool) -> lock_pb2.KeepAliveRequest:
        return lock_pb2.KeepAliveRequest(resource=self._resource, token=self._token,
                                         ttl=_durations.to_proto(self._ttl), sequence=sequence,
                                         permit=self._permit)

    def _period(self) -> float:
        return max(self._ttl / 4, 0.001)

    def _silence(self) -> Optional[float]:
        return silence_bound(self._ttl)

    def _answer(self, response: lock_pb2.KeepAliveResponse, sent: Optional[float]) -> None:
        if sent is not None:  # an answer this client cannot date does not move the deadline
            self._life.advance(sent + _durations.from_proto(response.lease.validity))

    def _stream_ended(self, code: grpc.StatusCode, details: str, gave_up: bool) -> None:
        self._life.lose(stream_loss(self._what(), "KeepAlive stream",
                                    f"resource '{self._resource}'", code, details, gave_up))

    def _lost_now(self, error: LeaseLost) -> None:
        """The loss was declared: stop renewing and give the lease back (fire and forget), so
        that the next holder need not wait out the ttl. NOT_FOUND: there is nothing to give."""
        self._lost_event.set()
        with self._lock:
            keeper = self._keeper
        if keeper is not None:
            keeper.cancel()
        if error.code != grpc.StatusCode.NOT_FOUND:
            self._calls.release_quietly(self._resource, self._token, (self._permit,))


class Lease(LeaseState):
    """A held lock on ``resource``. Use it as a context manager: leaving the block releases it.

    The local deadline is the send time of the request that granted or last renewed the lease
    plus the validity the server returned, on ``time.monotonic()``. The lease counts as valid
    until a guard before it, and is reported lost then unless a renewal moved it. The token
    stays inside: it is in no ``repr``/``str`` and no error message.
    """

    @property
    def lost(self) -> threading.Event:
        """Set the moment the lease is lost (before the loss callbacks run); never by a
        release. Work under the lease polls it (``lost.is_set()``) or waits on it."""
        event: threading.Event = self._lost_event
        return event

    def extend(self, ttl: _durations.Seconds) -> "Lease":
        """Renews the lease for ``ttl`` from now. Raises :class:`LeaseLost` when the lease is
        no longer held.

        On a kept lease (:meth:`keep_alive`) the new ttl goes through its stream: a request
        with the new ttl is sent at once, every later one carries it (one every ttl/4), and
        this returns when an answer to it (or a later one) came. A shorter ttl cuts the
        deadline at once, when that request is sent. Raises :class:`LockServiceError`
        (``DEADLINE_EXCEEDED``) when no answer came within the call timeout; the new ttl stays
        in force. A lease that is not kept is extended with a unary Extend call (UNAVAILABLE is
        retried while the lease is still valid).
        """
        run(self._extend(ttl))
        return self

    def release(self) -> bool:
        """Releases the lease and stops its keep-alive. Idempotent: True only on the call that
        released a lease a quorum still held.

        A kept lease is released by half-closing its stream (the server releases and ends it
        OK, or NOT_FOUND when it was not held); if the stream fails on its way out, a plain
        Release call follows. Raises :class:`LockServiceError` when no answer came.
        """
        return run(self._release())

    def close(self) -> None:
        """Releases; never raises for a lease that expired or could not be reached (it runs
        out by itself at its ttl)."""
        run(self._close())

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()
