"""The sync client's I/O: it performs the procedures' operations (``_ops.py``) by blocking the
calling thread, and carries out a kept grant's actions (``_kept.py``) with gRPC's sync streams.
Nothing here decides anything.

Threads: grpcio's sync API consumes a stream's request iterator on a thread of its own (one per
stream, gRPC's) and returns its answers only to a thread that blocks reading them, so each open
stream costs that thread and one reader: the floor for this API. Nothing else waits on a thread
of its own: the periodic requests, the reopen backoff, the silence and the deadline checks are
timers on the one shared scheduler thread, and a fire-and-forget give-back is driven by its
calls' completion callbacks.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable, Iterator, Optional, Set

import grpc

from ._clock import SYSTEM, Clock
from ._kept import Deferred, KeptCore, KeptStreams, requests_of
from ._ops import ENDED_OK, Call, Ended, Procedure, Read, Shield, Sleep, Steps, T, Wait, ended_by

_log = logging.getLogger("redlockd")


def run(procedure: Procedure[T]) -> T:
    """Runs ``procedure`` on this thread, blocking in each of its operations."""
    steps: Steps[T] = Steps(procedure)
    while not steps.done:
        steps.settle(perform)
    result: T = steps.value
    return result


def perform(op: Any) -> Any:
    """One operation, blocking."""
    if isinstance(op, Read):
        return read(op.call)
    if isinstance(op, Wait):
        with op.on:
            return op.on.wait_for(op.predicate, op.timeout)
    if isinstance(op, Call):
        future = op.method.future(op.request, timeout=op.timeout)
        try:
            return future.result()
        except BaseException:  # interrupted (or failed): the call is not left running
            future.cancel()
            raise
    if isinstance(op, Sleep):
        time.sleep(op.seconds)
        return None
    if isinstance(op, Shield):
        return run(op.procedure)
    raise TypeError(f"not an operation: {op!r}")


def read(call: Any) -> Any:
    try:
        return next(call)
    except StopIteration:
        return ENDED_OK
    except grpc.RpcError as e:
        return ended_by(e)


class Background:
    """Runs a procedure of calls and sleeps without a thread of its own (a fire-and-forget
    give-back): each call's completion callback steps it on, each sleep is a timer on the
    shared scheduler. Whatever it raises at the end is logged and dropped."""

    def __init__(self, procedure: Procedure[Any], in_flight: "InFlight") -> None:
        self._in_flight = in_flight
        try:
            self._steps: Steps[Any] = Steps(procedure)
        except Exception:
            _log.debug("a background call failed", exc_info=True)
            return
        self._go()

    def _go(self) -> None:
        try:
            self._issue()
        except Exception:
            _log.debug("a background call failed", exc_info=True)

    def _issue(self) -> None:
        while not self._steps.done:
            op = self._steps.op
            if isinstance(op, Call):
                try:
                    future = op.method.future(op.request, timeout=op.timeout)
                except Exception as e:  # a closed channel: the procedure decides
                    self._steps.fail(e)
                    continue
                self._in_flight.hold(future)
                future.add_done_callback(self._called)
                return
            if isinstance(op, Sleep):
                SYSTEM.at(SYSTEM.now() + op.seconds, self._slept)
                return
            self._steps.fail(TypeError(f"not a background operation: {op!r}"))

    def _called(self, future: grpc.Future) -> None:
        self._in_flight.forget(future)
        try:
            error = None if future.cancelled() else future.exception()
            if error is None and not future.cancelled():
                self._steps.resume(future.result())
            else:
                self._steps.fail(error if error is not None else grpc.FutureCancelledError())
        except Exception:
            _log.debug("a background call failed", exc_info=True)
            return
        self._go()

    def _slept(self) -> None:
        try:
            self._steps.resume(None)
        except Exception:
            _log.debug("a background call failed", exc_info=True)
            return
        self._go()


class InFlight:
    """Fire-and-forget calls, kept referenced until done: gRPC cancels a call whose future is
    garbage-collected."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: Set[grpc.Future] = set()

    def hold(self, future: grpc.Future) -> None:
        with self._lock:
            self._futures.add(future)

    def forget(self, future: grpc.Future) -> None:
        with self._lock:
            self._futures.discard(future)


class ThreadStreams(KeptStreams):
    """A kept grant's streams on gRPC's sync API: each stream's requests come from a queue that
    gRPC's own thread drains, and a daemon thread of ours reads its answers; timers run on the
    shared scheduler thread (real time) and the grant's clock."""

    def __init__(self, core: KeptCore, lock: "threading.Condition",
                 open_call: Callable[..., Any], clock: Clock) -> None:
        super().__init__(core, lock, lock, open_call, clock, SYSTEM)

    def _inbox(self) -> "queue.SimpleQueue[Any]":
        return queue.SimpleQueue()

    def _put(self, inbox: "queue.SimpleQueue[Any]", item: Any) -> None:
        inbox.put(item)

    def _requests(self, inbox: "queue.SimpleQueue[Any]") -> Iterator[Any]:
        return requests_of(inbox.get)

    def _spawn(self, procedure: Procedure[None]) -> None:
        threading.Thread(target=run, args=(procedure,), name=f"redlockd-kept {self._core.name}",
                         daemon=True).start()

    def _run_later(self, later: Deferred) -> None:
        def run_all() -> None:
            for fn, args in later:
                fn(*args)

        threading.Thread(target=run_all, name=f"redlockd-lost {self._core.name}",
                         daemon=True).start()

    # --- for tests ---------------------------------------------------------------------------

    def wait_answers(self, count: int, timeout: float) -> bool:
        """Waits until ``count`` answers were handled (or the stream ended)."""
        with self._lock:
            return bool(self._lock.wait_for(
                lambda: self._core.answers >= count or self._core.over, timeout))

    def wait_end(self, timeout: Optional[float]) -> Optional[Any]:
        """Waits for the stream's end for good: its status, or None after ``timeout``."""
        return run(self.ended_within(timeout))


__all__ = ["run", "perform", "read", "Background", "InFlight", "ThreadStreams", "Ended"]
