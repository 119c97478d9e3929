"""The asyncio client's calls: the sync client's call settings and procedures (``_calls.py``),
run and waited on on the event loop; fire-and-forget procedures are tasks kept referenced until
done."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable, Optional, Set

import grpc.aio

from .._calls import Answered, CallSettings
from .._clock import Clock
from .._kept import KeptCore
from .._ops import Procedure, T
from ..errors import LeaseLost
from ..retry import RetryPolicy
from ._tasks import LOOP_CLOCK, Signal, TaskStreams, on_the_loop, run


class AsyncCalls(CallSettings):
    """One grpc.aio channel's stubs and the client's call settings."""

    def __init__(self, channel: grpc.aio.Channel, call_timeout: float, retry: RetryPolicy,
                 clock: Optional[Clock] = None, answered: Answered = None) -> None:
        super().__init__(channel, call_timeout, retry, LOOP_CLOCK if clock is None else clock,
                         answered)
        self._in_flight: Set["asyncio.Task[Any]"] = set()

    @staticmethod
    def run(procedure: Procedure[T]) -> Awaitable[T]:
        return run(procedure)

    def waiter(self, lock: "threading.Condition") -> Signal:
        return Signal()

    def event(self) -> asyncio.Event:
        return asyncio.Event()

    def streams(self, core: KeptCore, lock: "threading.Condition", waiter: Any,
                open_call: Callable[..., Any]) -> TaskStreams:
        return TaskStreams(core, lock, waiter, open_call, self.clock)

    def background(self, procedure: Procedure[Any]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop any more: nothing to give back through
            procedure.close()
            return
        task = loop.create_task(run(procedure))
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)

    def dispatch(self, lose: Callable[[LeaseLost], None], error: LeaseLost, what: str) -> None:
        on_the_loop(lose, error, what)
