"""A grant's local deadline, the guard before it, and its loss reported once (rules 5 and 7),
for a lease or a leadership, of the sync client and of redlockd.aio alike.

The deadline is the send time of the request an answer echoes plus the validity it carries, on
the client's clock (``time.monotonic()``), moved only forward by answers; a ttl change sent
through the stream may cut it at once (rule 15). The check runs on the clock's timer (the shared
scheduler thread, or the event loop in redlockd.aio): no I/O here.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable, List, Optional

import grpc

from ._clock import SYSTEM, Cancellable, Clock
from .errors import LeaseLost

_log = logging.getLogger("redlockd")

#: The guard never exceeds this: a long ttl should not give up much of its validity.
MAX_GUARD = 0.1

LostCallback = Callable[[LeaseLost], None]
Dispatch = Callable[[Callable[[LeaseLost], None], LeaseLost, str], None]


def guard(ttl: float) -> float:
    """How long before its deadline a lease stops counting as valid: ttl/20, at most 100 ms.

    The loss is then reported before the deadline itself (the moment another holder may be
    granted the lock) has passed, even by a timer that runs a little late.
    """
    return min(ttl / 20, MAX_GUARD)


def shortened_deadline(sent: float, ttl: float) -> float:
    """The latest a grant renewed by a request sent at ``sent`` with ``ttl`` may be believed
    in: the request arrives after ``sent``, and the server keeps the drift (ttl * 0.01 + 2 ms)."""
    return sent + ttl * (1 - 0.01) - 0.002


def stream_loss(kept: str, stream: str, subject: str, code: grpc.StatusCode, details: str,
                gave_up: bool) -> LeaseLost:
    """The loss that a kept stream's end for good means, in the words of what it kept: ``kept``
    names the grant ("lease on resource 'r'"), ``stream`` the stream ("KeepAlive stream") and
    ``subject`` what it is for ("resource 'r'"). ``gave_up``: the guarded deadline passed while
    the stream was down."""
    if gave_up:
        return LeaseLost(grpc.StatusCode.DEADLINE_EXCEEDED,
                         f"{kept} ran out while its {stream} was down (last end: {code.name})")
    if code == grpc.StatusCode.OK:
        return LeaseLost(grpc.StatusCode.UNAVAILABLE, f"the {stream} of {subject} ended unexpectedly")
    return LeaseLost(code, details or f"the {stream} of {subject} ended {code.name}")


def on_a_thread(lose: Callable[[LeaseLost], None], error: LeaseLost, what: str) -> None:
    """How the sync client runs a loss its timer found: not on the timer thread, so that a slow
    callback does not delay other grants' checks."""
    threading.Thread(target=lose, args=(error,), name=f"redlockd-lost {what}", daemon=True).start()


def run_callback(callback: LostCallback, error: LeaseLost) -> None:
    try:
        callback(error)
    except Exception:
        _log.exception("a loss callback failed")


class Lifetime:
    """A grant's local deadline, guard and loss (rules 5 and 7), for a lease or a leadership.

    ``what`` names it in messages ("lease on resource 'x'"). ``on_loss(error)`` runs once when
    the loss is declared, before the callbacks and outside the lock: the owner stops renewing
    and gives the grant back there. ``lock`` is shared with the owner and its stream;
    ``notify()`` (under it) wakes whoever waits on the grant's state (default: the lock's
    ``notify_all``). ``dispatch`` runs a loss the timer found (a thread, or the loop).
    """

    def __init__(self, what: str, ttl: float, deadline: float,
                 lock: "threading.Condition", on_loss: Callable[[LeaseLost], None],
                 clock: Clock = SYSTEM, dispatch: Dispatch = on_a_thread,
                 notify: Optional[Callable[[], None]] = None) -> None:
        self.lock = lock
        self._notify = lock.notify_all if notify is None else notify
        self._clock = clock
        self._dispatch = dispatch
        self._what = what
        self._ttl = ttl
        self._guard = guard(ttl)
        self._deadline = deadline
        self._on_loss = on_loss
        self._finished = False  # released or resigned by the holder
        self._lost: Optional[LeaseLost] = None
        self._callbacks: List[LostCallback] = []
        self._check: Optional[Cancellable] = None
        with self.lock:
            self._schedule_check()

    @property
    def ttl(self) -> float:
        return self._ttl

    @property
    def guard(self) -> float:
        return self._guard

    @property
    def deadline(self) -> float:
        return self._deadline

    @property
    def lost(self) -> Optional[LeaseLost]:
        return self._lost

    @property
    def finished(self) -> bool:
        return self._finished

    def over(self) -> bool:
        return self._finished or self._lost is not None

    def valid(self) -> bool:
        return (not self._finished and self._lost is None
                and self._clock.now() < self._deadline - self._guard)

    def remaining(self) -> float:
        """Seconds left while valid (up to the guard before the deadline); 0 once not valid."""
        with self.lock:
            if not self.valid():
                return 0.0
            return max(0.0, self._deadline - self._guard - self._clock.now())

    # --- moving the deadline -----------------------------------------------------------------

    def advance(self, candidate: float) -> None:
        """An answer's deadline: moves forward only (an answer reporting an earlier renewal, or
        jeopardy, may arrive after a later one). The pending check sees it when it runs."""
        with self.lock:
            if not self.over() and candidate > self._deadline:
                self._deadline = candidate

    def set(self, ttl: float, deadline: float) -> None:
        """A unary Extend's outcome: the new ttl (and guard) and deadline, earlier or later."""
        with self.lock:
            if self.over():
                return
            self._ttl = ttl
            self._guard = guard(ttl)
            self._deadline = deadline
            self._schedule_check()

    def change_ttl(self, ttl: float, sent: float) -> None:
        """A request with a new ttl went out at ``sent``: the guard follows the ttl, and the
        deadline is cut at once to what that renewal may leave, if that is earlier (rule 15)."""
        with self.lock:
            if self.over():
                return
            self._ttl = ttl
            self._guard = guard(ttl)
            self._deadline = min(self._deadline, shortened_deadline(sent, ttl))
            self._schedule_check()

    # --- the end -----------------------------------------------------------------------------

    def finish(self) -> Optional[LeaseLost]:
        """The holder released or resigned: no loss is reported from now on. Returns the loss
        that came first, if one did."""
        with self.lock:
            self._finished = True
            self._cancel_check()
            self._notify()
            return self._lost

    def lose(self, error: LeaseLost) -> None:
        """Declares the loss (once, and never after the holder finished) and runs the hook and
        the callbacks on this thread."""
        callbacks = self._mark_lost(error)
        if callbacks is None:
            return
        self._on_loss(error)
        for callback in callbacks:
            run_callback(callback, error)

    def on_lost(self, callback: LostCallback) -> None:
        with self.lock:
            error = self._lost
            if error is None:
                self._callbacks.append(callback)
                return
        run_callback(callback, error)

    def _mark_lost(self, error: LeaseLost) -> Optional[List[LostCallback]]:
        with self.lock:
            if self.over():
                return None
            self._lost = error
            self._cancel_check()
            callbacks, self._callbacks = self._callbacks, []
            self._notify()
            return callbacks

    def _schedule_check(self) -> None:  # under self.lock
        self._cancel_check()
        self._check = self._clock.at(self._deadline - self._guard, self._check_deadline)

    def _cancel_check(self) -> None:  # under self.lock
        if self._check is not None:
            self._check.cancel()
            self._check = None

    def _check_deadline(self) -> None:
        """On the timer thread: lost when the guarded deadline came without a renewal."""
        with self.lock:
            if self.over():
                return
            due = self._deadline - self._guard
            if self._clock.now() < due:  # renewed meanwhile: check again then
                self._check = self._clock.at(due, self._check_deadline)
                return
            error = LeaseLost(grpc.StatusCode.DEADLINE_EXCEEDED,
                              f"{self._what} ran out: its local deadline came within "
                              f"{self._guard * 1000:.0f} ms without a renewal")
        self._dispatch(self.lose, error, self._what)
