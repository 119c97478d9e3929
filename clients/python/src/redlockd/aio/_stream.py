"""The asyncio side of the kept-stream machinery: a clock whose timer is the event loop, a
signal for coroutines that wait on a condition, and :class:`AsyncKeptStream`, the asyncio twin
of ``redlockd._kept.KeptStream``.

The stream keeps the same rules as the sync one (see ``redlockd/_kept.py``): a request at once,
then one every ttl/4 and one per change, each answer dated by the send time of the request whose
sequence it echoes (the :class:`~redlockd._kept.Sequencer` both share), reopened after an end
that does not say the grant is gone, while its owner says it is worth it. Everything runs on the
event loop: one task per kept grant reads the answers and reopens; grpc.aio consumes the request
generator.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any, AsyncIterator, Callable, Optional, Set, Tuple, Union

import grpc

from .._clock import Cancellable, Clock
from .._kept import (Ending, LeftStreams, Pending, Reopening, Sequencer, SilenceWatch, bound_of,
                     silent_end)
from .._pushback import pushback_of
from ..errors import LeaseLost

_log = logging.getLogger("redlockd")

_HALF_CLOSE = "half-close"
_STOP = "stop"
_SEND = "send"
_PARK = "park"


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
    """Wakes the coroutines waiting for a condition to hold: ``pulse()`` after each change (from
    the loop), ``await wait_for(predicate, timeout)`` to wait."""

    def __init__(self) -> None:
        self._event: Optional[asyncio.Event] = None

    def pulse(self) -> None:
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


class _NotOpened:
    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = type(error).__name__


Opened = Union[Any, _NotOpened]


class AsyncKeptStream:
    """One kept grant's stream on grpc.aio, reopened when it breaks, or superseded when it is
    silent, until its owner is done with it; as ``KeptStream`` (each stream read by a task of
    its own). The owner supplies the same functions (``open_call`` gets an async iterator of
    requests)."""

    def __init__(self, name: str, lock: "threading.Condition",
                 open_call: Callable[..., Any],
                 build: Callable[[int, bool], Any],
                 period: Callable[[], float],
                 on_answer: Callable[[Any, Optional[float]], None],
                 on_end: Callable[[grpc.StatusCode, str, bool], None],
                 may_resume: Callable[[int], bool],
                 backoff: Callable[[int], float],
                 clock: Clock,
                 answered: Optional[Callable[[Any], None]] = None,
                 silence: Callable[[], Optional[float]] = lambda: None) -> None:
        self._name = name
        self._silence = silence
        self._watch = SilenceWatch(clock, lock, self._silent_at, self._supersede)
        self._current_answered = False
        self._replacing = False
        self._lock = lock
        self._open_call = open_call
        self._build = build
        self._period = period
        self._on_answer = on_answer
        self._on_end = on_end
        self._may_resume = may_resume
        self._backoff = backoff
        self._answered_hook = answered
        self._seq = Sequencer(clock)
        self._control: Optional["asyncio.Queue[str]"] = None
        self._call: Any = None
        self._streams = 0
        self._closing = False
        self._cancelled = False
        self._wake = asyncio.Event()
        self._ending: Optional[Ending] = None
        self._ended = asyncio.Event()
        self.changed = Signal()
        self._reopening = Reopening(may_resume, backoff)
        self._left = LeftStreams(self._reopening)
        self._tasks: Set["asyncio.Task[None]"] = set()  # kept referenced until done

    def start(self) -> "AsyncKeptStream":
        """Opens the first stream now (its first request goes out at once) and starts the task
        that reads it, and reopens."""
        control: "asyncio.Queue[str]" = asyncio.Queue()
        self._control = control
        self._reader(control, self._open(control, False))
        return self

    def _reader(self, control: "asyncio.Queue[str]", call: Opened) -> None:
        task = asyncio.get_running_loop().create_task(self._run(control, call), name=self._name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def streams(self) -> int:
        return self._streams

    @property
    def ending(self) -> Optional[Ending]:
        return self._ending

    @property
    def answers(self) -> int:
        return self._seq.answers

    # --- what the owner does -----------------------------------------------------------------

    def request_now(self, apply: Callable[[], None],
                    on_sent: Optional[Callable[[int, float], None]] = None,
                    floor: bool = False) -> Pending:
        pending = Pending(on_sent, floor)
        with self._lock:
            apply()
            self._seq.pending.append(pending)
        if self._control is not None:
            self._control.put_nowait(_SEND)
        return pending

    async def wait_answered(self, pending: Pending, timeout: float,
                            stop: Callable[[], bool]) -> bool:
        await self.changed.wait_for(
            lambda: self._seq.has_answered(pending) or stop() or self._ended.is_set(), timeout)
        return self._seq.has_answered(pending)

    async def half_close(self, timeout: Optional[float]) -> Optional[Ending]:
        self.half_close_async()
        try:
            await asyncio.wait_for(self._ended.wait(), timeout)
        except asyncio.TimeoutError:
            return None
        return self._ending

    def half_close_async(self) -> None:
        if self._closing or self._cancelled:
            return
        self._closing = True
        if self._control is not None:
            self._control.put_nowait(_HALF_CLOSE)
        self._wake.set()
        self._drop_superseded()

    def cancel(self) -> None:
        """Leaves the stream without giving the grant back: it runs out at its validity."""
        self._cancelled = True
        call = self._call
        if self._control is not None:
            self._control.put_nowait(_STOP)
        self._wake.set()
        if call is not None:
            call.cancel()
        self._drop_superseded()
        self.changed.pulse()

    def _drop_superseded(self) -> None:
        """Cancels the superseded streams, then ends their requests (as KeptStream's)."""
        for call, control in self._left.take():
            call.cancel()
            control.put_nowait(_STOP)

    async def wait_end(self, timeout: Optional[float]) -> Optional[Ending]:
        try:
            await asyncio.wait_for(self._ended.wait(), timeout)
        except asyncio.TimeoutError:
            return None
        return self._ending

    # --- the requests ------------------------------------------------------------------------

    def _next(self, first: bool) -> Any:
        with self._lock:
            request = self._seq.next(self._build, first)
        self._watch.arm()
        return request

    async def _requests(self, control: "asyncio.Queue[str]",
                        only_first: bool) -> AsyncIterator[Any]:
        yield self._next(first=True)
        if only_first:
            return
        due = time.monotonic() + self._period()
        while True:
            try:
                signal = await asyncio.wait_for(control.get(), max(0.0, due - time.monotonic()))
            except asyncio.TimeoutError:
                due = max(due + self._period(), time.monotonic())
                yield self._next(first=False)
                continue
            if signal == _SEND:
                yield self._next(first=False)
                due = time.monotonic() + self._period()
                continue
            if signal == _PARK:
                while await control.get() != _STOP:
                    pass
            return

    # --- the answers and the end -------------------------------------------------------------

    def _accept(self, response: Any, call: Any) -> None:
        """An answer on ``call``: the open stream, or a superseded one (dated all the same)."""
        sequence = response.sequence
        with self._lock:
            sent = self._seq.date(sequence)
        self._on_answer(response, sent)
        with self._lock:
            self._seq.accepted(sequence, sent)
        if call is self._call:
            self._current_answered = True
            self._drop_superseded()  # the new stream works: the old ones are not needed
        self.changed.pulse()
        if self._answered_hook is not None:
            self._answered_hook(response)

    # --- silence (the rule and its timer are the sync stream's: _kept.SilenceWatch) ---------

    def _silent_at(self) -> Optional[float]:
        if self._call is None or self._closing or self._cancelled:
            return None
        bound = bound_of(self._silence(), self._replacing, self._current_answered)
        return None if bound is None else self._seq.silent_at(bound)

    def _supersede(self) -> None:
        """The open stream is silent: it sends nothing more (but is still read), and a new one
        is opened at once, read by a new task."""
        call, control = self._call, self._control
        if call is None or control is None or self._closing or self._cancelled:
            return
        with self._lock:  # the owner's may_resume takes it
            if not self._left.leave(call, control, self._current_answered):
                return
        control.put_nowait(_PARK)
        fresh: "asyncio.Queue[str]" = asyncio.Queue()
        self._control, self._call = fresh, None
        self._watch.disarm()
        _log.debug("%s: %s, reopening at once", self._name, silent_end(self._silence())[1])
        self._reader(fresh, self._open(fresh, False, replacing=True))

    async def _run(self, control: "asyncio.Queue[str]", call: Opened) -> None:
        """Reads ``call`` and, while it is the open stream, reopens after it ends; a superseded
        stream's task only reads it to its end."""
        while True:
            opened = time.monotonic()
            code, details, answered, pushback = await self._read(call)
            superseded = self._left.ended(call)
            control.put_nowait(_STOP)
            if superseded:
                return
            self._control = None
            self._call = None
            self._watch.disarm()
            asked = self._closing or self._cancelled
            with self._lock:
                delay, resumable = self._reopening.after(
                    code, answered, time.monotonic() - opened, asked, pushback)
            if delay is None:
                self._end_here((code, details))
                if resumable is not None:
                    self._on_end(code, details, resumable)
                return
            _log.debug("%s: stream ended %s (%s), reopening in %.0f ms", self._name, code.name,
                       details, delay * 1000)
            try:
                await asyncio.wait_for(self._wake.wait(), delay)
            except asyncio.TimeoutError:
                pass
            if self._cancelled:
                self._end_here((grpc.StatusCode.CANCELLED, "left by the holder"))
                return
            control = asyncio.Queue()
            only_first = self._closing
            self._control = control
            self._wake.clear()
            call = self._open(control, only_first)

    def _open(self, control: "asyncio.Queue[str]", only_first: bool,
              replacing: bool = False) -> Opened:
        with self._lock:
            self._seq.new_stream()
        try:
            # A grant that exists waits for a connection to a replica rather than failing while
            # none is up (a rolling restart): it starts the moment one is, backoff or not.
            call = self._open_call(self._requests(control, only_first),
                                   wait_for_ready=self._silence() is not None)
        except Exception as e:  # e.g. the channel was closed under it
            _log.debug("%s: cannot open a stream: %s", self._name, e)
            return _NotOpened(e)
        self._streams += 1
        self._call = call
        self._current_answered, self._replacing = False, replacing
        self._watch.arm()
        if self._cancelled:
            call.cancel()
        return call

    async def _read(self, call: Opened) -> Tuple[grpc.StatusCode, str, bool, Optional[float]]:
        """Reads ``call`` to its end: its status, whether it answered, and its pushback."""
        if isinstance(call, _NotOpened):
            return grpc.StatusCode.UNAVAILABLE, f"cannot open a stream: {call.error}", False, None
        answered = False
        code, details, pushback = grpc.StatusCode.OK, "", None
        try:
            async for response in call:
                answered = True
                self._accept(response, call)
        except grpc.RpcError as e:
            pushback = pushback_of(e)
            got = e.code()
            code = got if isinstance(got, grpc.StatusCode) else grpc.StatusCode.UNKNOWN
            details = e.details() or ""
        except asyncio.CancelledError:
            if not (self._cancelled or call.cancelled()):
                raise  # this task was cancelled (the loop is closing)
            code, details = grpc.StatusCode.CANCELLED, "cancelled"
        except Exception as e:  # a bug here must still end the stream, not hang its owner
            _log.exception("%s: reading the stream failed", self._name)
            call.cancel()
            code, details = grpc.StatusCode.UNKNOWN, type(e).__name__
        return code, details, answered, pushback

    def _end_here(self, ending: Ending) -> None:
        self._ending = ending
        self._ended.set()
        self.changed.pulse()

