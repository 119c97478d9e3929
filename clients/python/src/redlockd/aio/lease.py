"""A held lock of the asyncio client: the sync :class:`~redlockd.Lease`'s rules and procedures
(``redlockd/lease.py``), awaited."""
from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Optional, Type

from .. import _durations
from ..lease import LeaseState
from ._tasks import run

__all__ = ["AsyncLease"]


class AsyncLease(LeaseState):
    """A held lock on ``resource``: ``async with`` it, or ``await lease.release()``.

    The same deadline, guard, loss and keep-alive as the sync :class:`~redlockd.Lease`; its
    timer and its loss callbacks run on the event loop, and its stream is read by a task.
    """

    @property
    def lost(self) -> asyncio.Event:
        """Set the moment the lease is lost (before the loss callbacks run); never by a
        release."""
        event: asyncio.Event = self._lost_event
        return event

    async def extend(self, ttl: _durations.Seconds) -> "AsyncLease":
        """Renews the lease for ``ttl`` from now (through the stream on a kept lease, else a
        unary Extend): as the sync :meth:`redlockd.Lease.extend`."""
        await run(self._extend(ttl))
        return self

    async def release(self) -> bool:
        """Releases the lease and stops its keep-alive; as :meth:`redlockd.Lease.release`."""
        return await run(self._release())

    async def close(self) -> None:
        """Releases; never raises for a lease that expired or could not be reached."""
        await run(self._close())

    async def __aenter__(self) -> "AsyncLease":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()
