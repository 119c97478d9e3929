"""The client's clock: what time it is (``time.monotonic()``) and a timer on that time.

Every deadline, send time and guard check of a client reads this one clock, so that a test can
give the client a clock it moves by hand (``LockClient(channel, _clock=...)``): a guard that
runs out, a timer that fires, are then steps of the test, not sleeps.
"""
from __future__ import annotations

import time
from typing import Callable, Protocol

from ._scheduler import SCHEDULER

class Cancellable(Protocol):
    def cancel(self) -> object: ...

class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic clock."""
        ...

    def at(self, when: float, fn: Callable[[], None]) -> Cancellable:
        """Runs ``fn`` (on a thread or loop of the clock's own) once ``now()`` reaches
        ``when``; the result's ``cancel()`` drops it if it has not started."""
        ...

class SystemClock:
    """``time.monotonic()`` and the shared scheduler thread."""

    def now(self) -> float:
        return time.monotonic()

    def at(self, when: float, fn: Callable[[], None]) -> Cancellable:
        return SCHEDULER.at(when, fn)

SYSTEM = SystemClock()
