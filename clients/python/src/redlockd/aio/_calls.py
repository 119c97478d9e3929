"""The asyncio client's calls: grpc.aio stubs, the shared call settings, awaited unary calls with
retries, and fire-and-forget Releases (tasks kept referenced until done)."""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Optional, Sequence, Set, Tuple

import grpc
import grpc.aio

from .._calls import Answered, CallSettings
from .._clock import Clock
from .._proto import election_pb2_grpc, lock_pb2, lock_pb2_grpc
from ..errors import from_rpc_error
from ..retry import RetryPolicy
from ._stream import LOOP_CLOCK


class AsyncCalls(CallSettings):
    """One grpc.aio channel's stubs and the client's call settings."""

    def __init__(self, channel: grpc.aio.Channel, call_timeout: float, retry: RetryPolicy,
                 clock: Optional[Clock] = None, answered: Answered = None) -> None:
        super().__init__(call_timeout, retry, LOOP_CLOCK if clock is None else clock, answered)
        # The generated stubs are untyped (grpc has no type stubs): the calls on them are Any.
        self.lock_stub: Any = lock_pb2_grpc.LockServiceStub(channel)  # type: ignore[no-untyped-call]
        self.election_stub: Any = election_pb2_grpc.ElectionServiceStub(channel)  # type: ignore[no-untyped-call]
        self._in_flight: Set["asyncio.Task[Any]"] = set()

    async def unary(self, method: Callable[..., Awaitable[Any]], request: Any,
                    still_worth_it: Callable[[], bool] = lambda: True,
                    deadline: Optional[float] = None) -> Tuple[Any, float]:
        """An awaited unary call that is over by ``deadline`` (default: the call timeout from
        now), UNAVAILABLE retried until then while ``still_worth_it()``; as the sync client's.
        Returns the answer and the send time of the attempt it answers."""
        if deadline is None:
            deadline = self.unary_deadline()
        attempt = 1
        while True:
            sent = self.clock.now()
            try:
                return await method(request, timeout=max(0.0, deadline - sent)), sent
            except grpc.RpcError as e:
                wait = self.unary_retry_wait(e, attempt, deadline)
                if wait is None or not still_worth_it():
                    raise from_rpc_error(e) from None
            await asyncio.sleep(wait)
            attempt += 1

    def release_quietly(self, resource: str, token: str, permits: Sequence[int] = (0,)) -> None:
        """Fire and forget: a Release nobody waits for (the lease runs out by itself if it
        fails), one per permit in ``permits`` (0: the lock), one after another, UNAVAILABLE
        retried as any unary call's, all of it within one call timeout from now."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop any more: nothing to give back through
            return
        task = loop.create_task(self._release(resource, token, tuple(permits),
                                              self.unary_deadline()))
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)

    async def _release(self, resource: str, token: str, permits: Sequence[int],
                       deadline: float) -> None:
        for permit in permits:
            try:
                await self.unary(self.lock_stub.Release, lock_pb2.ReleaseRequest(
                    resource=resource, token=token, permit=permit), deadline=deadline)
            except Exception:  # the lease runs out by itself
                pass
