"""A held lock of the asyncio client: the sync :class:`~redlockd.Lease`'s rules, awaited."""
from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import Callable, Optional, Type

import grpc

from .. import _durations
from ..errors import LeaseLost, LockServiceError
from ..lease import LeaseState
from .._proto import lock_pb2
from ._calls import AsyncCalls
from ._stream import AsyncKeptStream, on_the_loop

__all__ = ["AsyncLease"]

_log = logging.getLogger("redlockd")


class AsyncLease(LeaseState):
    """A held lock on ``resource``: ``async with`` it, or ``await lease.release()``.

    The same deadline, guard and loss as the sync :class:`~redlockd.Lease`; its timer and its
    loss callbacks run on the event loop. :attr:`lost` is an :class:`asyncio.Event` set the
    moment the lease is lost.
    """

    def __init__(self, calls: AsyncCalls, resource: str, token: str, fencing_token: int,
                 ttl: float, deadline: float, permit: int = 0) -> None:
        self._lost_event = asyncio.Event()
        super().__init__(calls, resource, token, fencing_token, ttl, deadline, on_the_loop,
                         permit=permit)
        self._calls = calls
        self._kept: Optional[AsyncKeptStream] = None

    @property
    def lost(self) -> asyncio.Event:
        """Set the moment the lease is lost (before the loss callbacks run); never by a
        release."""
        return self._lost_event

    def on_lost(self, callback: Callable[[LeaseLost], None]) -> "AsyncLease":
        """Calls ``callback(error)`` once, on the event loop, when the lease is lost; at once if
        it already is. Keep it short (it runs on the loop); it may start a task."""
        self._life.on_lost(callback)
        return self

    async def extend(self, ttl: _durations.Seconds) -> "AsyncLease":
        """Renews the lease for ``ttl`` from now (through the stream on a kept lease, else a
        unary Extend): as the sync :meth:`redlockd.Lease.extend`."""
        ttl_s = _durations.seconds(ttl)
        with self._lock:
            self._raise_if_over()
            kept = self._kept
        if kept is not None:
            return await self._extend_kept(kept, ttl_s)
        request = lock_pb2.ExtendRequest(
            resource=self._resource, token=self._token, ttl=_durations.to_proto(ttl_s),
            permit=self._permit)
        try:
            response, sent = await self._calls.unary(
                self._calls.lock_stub.Extend, request, still_worth_it=lambda: self.valid)
        except LockServiceError as e:
            if e.code == grpc.StatusCode.NOT_FOUND:
                error = LeaseLost(e.code, e.details)
                self._life.lose(error)
                raise (self._life.lost or error) from None
            raise
        with self._lock:
            if self._kept is not None:
                self._ttl = ttl_s
            self._life.set(ttl_s, sent + _durations.from_proto(response.lease.validity))
        return self

    async def _extend_kept(self, kept: AsyncKeptStream, ttl: float) -> "AsyncLease":
        def apply() -> None:
            self._ttl = ttl

        def on_sent(sequence: int, sent: float) -> None:
            self._life.change_ttl(ttl, sent)

        pending = kept.request_now(apply, on_sent, floor=True)
        answered = await kept.wait_answered(pending, self._calls.call_timeout, self._life.over)
        with self._lock:
            self._raise_if_over()
        if not answered:
            raise LockServiceError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"{self._what()}: no answer to the ttl change within "
                f"{self._calls.call_timeout * 1000:.0f} ms")
        return self

    def keep_alive(self) -> "AsyncLease":
        """Keeps the lease alive on a KeepAlive stream, read by a task of its own, until it is
        released or lost (as the sync :meth:`redlockd.Lease.keep_alive`). Call it on the loop."""
        with self._lock:
            if self._kept is None and not self._life.over():
                self._kept = AsyncKeptStream(
                    f"KeepAlive of resource '{self._resource}'", self._lock,
                    self._calls.lock_stub.KeepAlive, self._request, self._period,
                    self._answer, self._stream_ended, lambda failures: self._life.valid(),
                    self._calls.resume_backoff, self._calls.clock, self._calls.answered,
                    self._silence)
                self._keeper = self._kept
                self._kept.start()
        return self

    async def release(self) -> bool:
        """Releases the lease and stops its keep-alive; as :meth:`redlockd.Lease.release`."""
        with self._lock:
            if self._released:
                return False
            self._released = True
            lost = self._life.finish()
            kept = self._kept
        if kept is not None and lost is None:
            ending = await kept.half_close(self._calls.call_timeout)
            if ending is None:
                kept.cancel()
            elif ending[0] == grpc.StatusCode.OK:
                return True
            elif ending[0] == grpc.StatusCode.NOT_FOUND:
                return False
        request = lock_pb2.ReleaseRequest(resource=self._resource, token=self._token,
                                          permit=self._permit)
        response, _ = await self._calls.unary(self._calls.lock_stub.Release, request)
        return bool(response.released)

    async def close(self) -> None:
        """Releases; never raises for a lease that expired or could not be reached."""
        try:
            await self.release()
        except LockServiceError as e:
            _log.debug("release of resource '%s' failed: %s", self._resource, e)

    async def __aenter__(self) -> "AsyncLease":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()

    def _lost_now(self, error: LeaseLost) -> None:
        self._lost_event.set()
        super()._lost_now(error)

    def _give_back(self) -> None:
        self._calls.release_quietly(self._resource, self._token, (self._permit,))
