"""redlockd.aio's I/O: it performs the procedures' operations (``redlockd/_ops.py``) by awaiting
them on the event loop, and carries out a kept grant's actions (``redlockd/_kept.py``) with
grpc.aio's streams, each read by a task of its own (grpc.aio consumes the request iterators).
Nothing here decides anything; the rules are the sync client's, written once.
"""
from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, AsyncIterator, Callable, Optional

import grpc
import grpc.aio

from .._clock import Cancellable, Clock
from .._kept import END, Deferred, KeptCore, KeptStreams
from .._ops import ENDED_OK, Call, Ended, Procedure, Read, Shield, Sleep, Steps, T, Wait, ended_by
from ..errors import LeaseLost


class LoopClock:
    """``time.monotonic()``, with the running event loop as timer (the loop's own clock is
    ``time.monotonic()`` too). Timers run on the loop."""

    def now(self) -> float:
        return time.monotonic()

    def at(self, when: float, fn: Callable[[], None]) -> Cancellable:
        return asyncio.get_running_loop().call_later(max(0.0, when - time.monotonic()), fn)


LOOP_CLOCK = LoopClock()


def on_the_loop(lose: Callable[[LeaseLost], None], error: LeaseLost, what: str) -> None:
    """How the asyncio client runs a loss its timer found: at once, on the loop (the callbacks
    and the cancellation of work must not wait for a thread)."""
    lose(error)


class Signal:
    """Wakes the coroutines waiting for a condition to hold: ``notify_all()`` after each change
    (on the loop), ``await wait_for(predicate, timeout)`` to wait."""

    def __init__(self) -> None:
        self._event: Optional[asyncio.Event] = None

    def notify_all(self) -> None:
        event, self._event = self._event, None
        if event is not None:
            event.set()

    async def wait_for(self, predicate: Callable[[], bool], timeout: Optional[float]) -> bool:
        until = None if timeout is None else time.monotonic() + timeout
        while not predicate():
            if self._event is None:
                self._event = asyncio.Event()
            event = self._event
            if until is None:
                await event.wait()
                continue
            left = until - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(event.wait(), left)
            except asyncio.TimeoutError:
                return predicate()
        return True


async def run(procedure: Procedure[T]) -> T:
    """Runs ``procedure`` on the loop, awaiting each of its operations."""
    steps: Steps[T] = Steps(procedure)
    while not steps.done:
        try:
            outcome = await perform(steps.op)
        except BaseException as e:  # the procedure decides: clean up, retry or let it through
            steps.fail(e)
            continue
        steps.resume(outcome)
    result: T = steps.value
    return result


async def perform(op: Any) -> Any:
    """One operation, awaited."""
    if isinstance(op, Read):
        return await read(op.call)
    if isinstance(op, Wait):
        return await op.on.wait_for(op.predicate, op.timeout)
    if isinstance(op, Call):
        return await op.method(op.request, timeout=op.timeout)
    if isinstance(op, Sleep):
        await asyncio.sleep(op.seconds)
        return None
    if isinstance(op, Shield):
        return await asyncio.shield(run(op.procedure))
    raise TypeError(f"not an operation: {op!r}")


async def read(call: Any) -> Any:
    try:
        message = await call.read()
    except grpc.RpcError as e:
        return ended_by(e)
    except asyncio.CancelledError:
        if not call.cancelled():
            raise  # this task was cancelled (the loop is closing)
        return Ended(grpc.StatusCode.CANCELLED, "cancelled")
    return ENDED_OK if message is grpc.aio.EOF else message


async def requests_of(inbox: "asyncio.Queue[Any]") -> AsyncIterator[Any]:
    """The requests put in ``inbox``, until END (as grpc.aio consumes them)."""
    while True:
        item = await inbox.get()
        if item is END:
            return
        yield item


class TaskStreams(KeptStreams):
    """A kept grant's streams on grpc.aio: each stream's requests come from an asyncio queue,
    its answers are read by a task of its own; timers are loop timers and the grant's clock."""

    def __init__(self, core: KeptCore, lock: "threading.Condition", waiter: Signal,
                 open_call: Callable[..., Any], clock: Clock) -> None:
        super().__init__(core, lock, waiter, open_call, clock, LOOP_CLOCK)
        self._tasks: "set[asyncio.Task[None]]" = set()  # kept referenced until done

    def _inbox(self) -> "asyncio.Queue[Any]":
        return asyncio.Queue()

    def _put(self, inbox: "asyncio.Queue[Any]", item: Any) -> None:
        inbox.put_nowait(item)

    def _requests(self, inbox: "asyncio.Queue[Any]") -> AsyncIterator[Any]:
        return requests_of(inbox)

    def _spawn(self, procedure: Procedure[None]) -> None:
        task = asyncio.get_running_loop().create_task(run(procedure), name=self._core.name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _run_later(self, later: Deferred) -> None:
        for fn, args in later:
            fn(*args)
