"""Leader election on the asyncio client: the sync client's candidacy, leadership and observation
rules and procedures (``redlockd/election.py``), awaited on the event loop."""
from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import Callable, Optional, Type

from ..election import DONE, Leader, LeaderStreamState, LeadershipState, ObservationBase
from ._tasks import run

__all__ = ["AsyncLeadership", "AsyncLeaderStream", "AsyncObservation"]

_log = logging.getLogger("redlockd")


class AsyncLeadership(LeadershipState):
    """Leading ``election`` on the asyncio client: ``async with`` it (leaving resigns), or
    ``await leadership.resign()``. The same deadline, guard, loss and resume as the sync
    :class:`~redlockd.Leadership`; the loss callbacks run on the loop."""

    @property
    def lost(self) -> asyncio.Event:
        """Set the moment the leadership is lost (before the loss callbacks run); never by a
        resignation."""
        event: asyncio.Event = self._lost_event
        return event

    async def proclaim(self, value: str) -> "AsyncLeadership":
        """Makes ``value`` the value everyone sees, keeping the term; as
        :meth:`redlockd.Leadership.proclaim`."""
        await run(self._proclaim(value))
        return self

    async def resign(self) -> bool:
        """Resigns by half-closing the stream and waits for its end (the call timeout); as
        :meth:`redlockd.Leadership.resign`."""
        return await run(self._resign())

    async def close(self) -> None:
        """Resigns; never raises."""
        await run(self._close())

    async def __aenter__(self) -> "AsyncLeadership":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()


# --- observing -----------------------------------------------------------------------------


class AsyncLeaderStream(LeaderStreamState):
    """An election's leader (or None), then every change: an async iterator that is also an
    async context manager (leaving the block, or :meth:`close`, ends the iteration)::

        async with client.observe("scheduler") as changes:
            async for leader in changes:
                ...

    The same rules as the sync :class:`~redlockd.LeaderStream`: reopened without a limit when
    the stream ends, only states that are news returned.
    """

    def __aiter__(self) -> "AsyncLeaderStream":
        return self

    async def __anext__(self) -> Optional[Leader]:
        state = await run(self._next())
        if state is DONE:
            raise StopAsyncIteration
        leader: Optional[Leader] = state
        return leader

    async def __aenter__(self) -> "AsyncLeaderStream":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()


class AsyncObservation(ObservationBase):
    """Calls back (on the loop) with an election's leader and every change, until
    :meth:`close`: a task of its own iterates an :class:`AsyncLeaderStream`."""

    def __init__(self, stream: AsyncLeaderStream,
                 callback: Callable[[Optional[Leader]], None]) -> None:
        super().__init__(stream, callback)
        self._states = stream
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"redlockd-observe {stream.election}")

    def close(self) -> None:
        """Stops observing: no callback runs after it returns (the callbacks run on the loop,
        so none is under way unless close is called from one)."""
        self._stream.close()
        if asyncio.current_task() is not self._task:
            self._task.cancel()

    async def __aenter__(self) -> "AsyncObservation":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    async def _run(self) -> None:
        try:
            async for state in self._states:
                if not self._deliver(state):
                    return
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug here must not end the observation silently
            _log.exception("observer of election '%s' failed", self.election)
