"""Leader election on the asyncio client: the sync client's candidacy and leadership rules
(``redlockd/election.py``, whose state classes these extend), on grpc.aio and the event loop."""
from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import Any, Callable, Optional, Type

import grpc

from .. import _durations
from .._proto import election_pb2
from ..election import (CandidacyState, Leader, LeadershipState, StateFilter, _ms)
from ..errors import LeaseLost, LockServiceError
from ._calls import AsyncCalls
from ._stream import AsyncKeptStream, Signal, on_the_loop

__all__ = ["AsyncLeadership", "AsyncLeaderStream", "AsyncObservation"]

_log = logging.getLogger("redlockd")


class _AsyncCandidacy(CandidacyState):
    def __init__(self, calls: AsyncCalls, election: str, value: str, ttl: float) -> None:
        super().__init__(calls, election, value, ttl)
        self._calls = calls
        self._signal = Signal()
        self._kept = AsyncKeptStream(
            f"Campaign of election '{election}'", self._lock, calls.election_stub.Campaign,
            self._request, self._period, self._answer, self._end, self._may_resume,
            calls.resume_backoff, calls.clock, calls.answered, self._silence)
        self._stream = self._kept
        self._kept.start()

    def _lead(self, term: int, value: str, deadline: float) -> "AsyncLeadership":
        return AsyncLeadership(self._calls, self, self._kept, self._election, self._ttl, term,
                               value, deadline, self._lock)

    def _changed(self) -> None:
        super()._changed()
        self._signal.pulse()

    async def wait(self, wait: Optional[float]) -> "AsyncLeadership":
        try:
            await self._signal.wait_for(
                lambda: self._leadership is not None or self._ending is not None, wait)
            leadership = self._leadership
            if isinstance(leadership, AsyncLeadership):
                return leadership
            if self._ending is not None:
                raise self._failure(*self._ending)
            self._withdrawn = True
        except BaseException as e:
            if not isinstance(e, LockServiceError):  # cancelled: give the candidacy up
                await self._give_up()
            raise
        if await self._kept.half_close(self._calls.call_timeout) is None:
            self._kept.cancel()
        raise self._not_within(wait)

    async def _give_up(self) -> None:
        self._withdrawn = True
        leadership = self._leadership
        if isinstance(leadership, AsyncLeadership):
            await asyncio.shield(leadership.close())
        else:
            self._kept.half_close_async()


async def campaign(calls: AsyncCalls, election: str, value: str, ttl: _durations.Seconds,
                   wait: Optional[_durations.Seconds]) -> "AsyncLeadership":
    ttl_s = _durations.seconds(ttl)
    wait_s = None if wait is None else _durations.seconds(wait)
    if wait_s is not None and wait_s < 0:
        raise LockServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"election '{election}': negative wait {_ms(wait_s)}")
    return await _AsyncCandidacy(calls, election, value, ttl_s).wait(wait_s)


class AsyncLeadership(LeadershipState):
    """Leading ``election`` on the asyncio client: ``async with`` it (leaving resigns), or
    ``await leadership.resign()``. The same deadline, guard, loss and resume as the sync
    :class:`~redlockd.Leadership`; :attr:`lost` is an :class:`asyncio.Event` set the moment
    the leadership is lost, and the loss callbacks run on the loop."""

    def __init__(self, calls: AsyncCalls, candidacy: _AsyncCandidacy, stream: AsyncKeptStream,
                 election: str, ttl: float, term: int, value: str, deadline: float,
                 lock: Any) -> None:
        self._lost_event = asyncio.Event()
        self._signal = Signal()
        super().__init__(calls, candidacy, stream, election, ttl, term, value, deadline, lock,
                         on_the_loop)
        self._calls = calls
        self._kept = stream
        self._campaign = candidacy

    @property
    def lost(self) -> asyncio.Event:
        """Set the moment the leadership is lost (before the loss callbacks run); never by a
        resignation."""
        return self._lost_event

    def on_lost(self, callback: Callable[[LeaseLost], None]) -> "AsyncLeadership":
        """Calls ``callback(error)`` once, on the loop, when the leadership is lost; at once if
        it already is. Never after a resignation."""
        self._life.on_lost(callback)
        return self

    async def proclaim(self, value: str) -> "AsyncLeadership":
        """Makes ``value`` the value everyone sees, keeping the term; as
        :meth:`redlockd.Leadership.proclaim`."""
        with self._lock:
            self._raise_if_over()
            seen = self._answers
        self._campaign._send_value(value)
        shown = await self._signal.wait_for(
            lambda: self._life.over() or (self._answers > seen and self._value == value),
            self._calls.call_timeout)
        with self._lock:
            self._raise_if_over()
        if not shown:
            raise LockServiceError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"election '{self._election}': no answer showed the new value within "
                f"{_ms(self._calls.call_timeout)}")
        return self

    async def resign(self) -> bool:
        """Resigns by half-closing the stream and waits for its end (the call timeout); as
        :meth:`redlockd.Leadership.resign`."""
        with self._lock:
            if self._resigned:
                return False
            self._resigned = True
            lost = self._life.finish()
        if lost is not None:
            return False
        ending = await self._kept.half_close(self._calls.call_timeout)
        if ending is None:
            _log.debug("election '%s': no end of the Campaign stream within %s after resigning",
                       self._election, _ms(self._calls.call_timeout))
            self._kept.cancel()
            return False
        return bool(ending[0] == grpc.StatusCode.OK)

    async def close(self) -> None:
        """Resigns; never raises."""
        try:
            await self.resign()
        except Exception as e:  # pragma: no cover - resign raises nothing it expects
            _log.debug("resigning election '%s' failed: %s", self._election, e)

    async def __aenter__(self) -> "AsyncLeadership":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()

    def _changed(self) -> None:
        super()._changed()
        self._signal.pulse()

    def _lost_now(self, error: LeaseLost) -> None:
        self._lost_event.set()
        super()._lost_now(error)


# --- observing -----------------------------------------------------------------------------


class AsyncLeaderStream:
    """An election's leader (or None), then every change: an async iterator that is also an
    async context manager (leaving the block, or :meth:`close`, ends the iteration)::

        async with client.observe("scheduler") as changes:
            async for leader in changes:
                ...

    The same rules as the sync :class:`~redlockd.LeaderStream`: reopened without a limit when
    the stream ends, only states that are news returned.
    """

    def __init__(self, calls: AsyncCalls, election: str) -> None:
        self._calls = calls
        self._election = election
        self._closed = asyncio.Event()
        self._call: Any = None
        self._filter = StateFilter()
        self._failures = 0
        self._handed: Optional[Any] = None

    @property
    def election(self) -> str:
        return self._election

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Ends the stream; an iteration waiting for the next state ends."""
        self._closed.set()
        call, self._call = self._call, None
        if call is not None:
            call.cancel()

    def __aiter__(self) -> "AsyncLeaderStream":
        return self

    async def __anext__(self) -> Optional[Leader]:
        if self._handed is not None:
            handed, self._handed = self._handed, None
            self._calls.processed(handed)
        while True:
            if self._closed.is_set():
                raise StopAsyncIteration
            if self._call is None:
                try:
                    self._call = self._calls.election_stub.Observe(
                        election_pb2.ObserveRequest(election=self._election))
                except Exception:
                    _log.warning("observer of election '%s' stopped: cannot open a stream",
                                 self._election, exc_info=True)
                    raise StopAsyncIteration from None
            call = self._call
            code: Any = grpc.StatusCode.OK
            error: Any = None
            try:
                response = await call.read()
            except grpc.RpcError as e:
                code, error = e.code(), e
            except asyncio.CancelledError:
                if self._closed.is_set():
                    raise StopAsyncIteration from None
                raise
            else:
                if response is not grpc.aio.EOF:
                    self._failures = 0
                    news, state = self._filter.take(response)
                    if news:
                        self._handed = response
                        return state
                    self._calls.processed(response)
                    continue
            self._call = None
            if self._closed.is_set():
                raise StopAsyncIteration
            self._failures += 1
            delay = self._calls.reopen_wait(self._failures, error)
            _log.debug("observer of election '%s': stream ended %s, reopening in %s",
                       self._election, getattr(code, "name", code), _ms(delay))
            try:
                await asyncio.wait_for(self._closed.wait(), delay)
            except asyncio.TimeoutError:
                pass

    async def __aenter__(self) -> "AsyncLeaderStream":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"AsyncLeaderStream(election={self._election!r}, "
                f"{'closed' if self._closed.is_set() else 'open'}, last={self._filter.last!r})")

    __str__ = __repr__


class AsyncObservation:
    """Calls back (on the loop) with an election's leader and every change, until
    :meth:`close`: a task of its own iterates an :class:`AsyncLeaderStream`."""

    def __init__(self, calls: AsyncCalls, election: str,
                 callback: Callable[[Optional[Leader]], None]) -> None:
        self._election = election
        self._callback = callback
        self._stream = AsyncLeaderStream(calls, election)
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"redlockd-observe {election}")

    @property
    def election(self) -> str:
        return self._election

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

    def __repr__(self) -> str:
        return repr(self._stream).replace("AsyncLeaderStream", "AsyncObservation", 1)

    __str__ = __repr__

    async def _run(self) -> None:
        try:
            async for state in self._stream:
                if self._stream.closed:
                    return
                try:
                    self._callback(state)
                except Exception:
                    _log.exception("an observe callback of election '%s' failed",
                                   self._election)
        except asyncio.CancelledError:
            pass
        except Exception:
            _log.exception("observer of election '%s' failed", self._election)
