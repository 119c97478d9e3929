"""One daemon thread that runs every lease's deadline check.

Each lease has a single pending check at a time (its guarded deadline); a renewal that moves the
deadline forward does not touch it: the check, when it runs, sees the new deadline and
schedules itself again. So a kept lease costs one heap entry per renewal period at most, and
no thread of its own.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Callable, List, Optional, Tuple

_log = logging.getLogger("redlockd")


class Scheduled:
    """A pending call; ``cancel()`` drops it if it has not started."""

    __slots__ = ("when", "fn", "cancelled")

    def __init__(self, when: float, fn: Callable[[], None]) -> None:
        self.when = when
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Scheduler:
    def __init__(self, name: str = "redlockd-timer") -> None:
        self._name = name
        self._cond = threading.Condition()
        self._heap: List[Tuple[float, int, Scheduled]] = []
        self._order = itertools.count()
        self._thread: Optional[threading.Thread] = None

    def at(self, when: float, fn: Callable[[], None]) -> Scheduled:
        """Runs ``fn`` on the scheduler thread once ``time.monotonic()`` reaches ``when``."""
        entry = Scheduled(when, fn)
        with self._cond:
            heapq.heappush(self._heap, (when, next(self._order), entry))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()
        return entry

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if not self._heap:
                        self._cond.wait()
                        continue
                    when, _, entry = self._heap[0]
                    if entry.cancelled:
                        heapq.heappop(self._heap)
                        continue
                    delay = when - time.monotonic()
                    if delay <= 0:
                        heapq.heappop(self._heap)
                        break
                    self._cond.wait(delay)
            try:
                entry.fn()
            except Exception:  # a bug in a check must not stop every other lease's checks
                _log.exception("redlockd timer task failed")


#: Shared by every client in the process.
SCHEDULER = Scheduler()
