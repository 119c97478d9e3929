"""What the client's rules ask of the I/O: the only places where a call is made, a message read
or time waited.

Every sequence of the client that waits (an acquire and its retries, a unary call and its
retries, extend, release, resign, proclaim, a campaign's wait, an observation's next state, the
reading of a kept stream) is written once, as a *procedure*: a generator that yields one of the
operations below and is sent its outcome (or has its error thrown in, as the call would have
raised it). It does no I/O itself. The sync client performs the operations by blocking
(``redlockd/_threads.py``), ``redlockd.aio`` by awaiting (``redlockd/aio/_tasks.py``); neither
decides anything. So a rule lives in one place, and both flavours keep it alike (h11 and h2 keep
their protocols apart from their sockets the same way).
"""
from __future__ import annotations

from typing import Any, Callable, Generator, Generic, NamedTuple, Optional, TypeVar

import grpc

from ._pushback import pushback_of

T = TypeVar("T")

#: A procedure: yields operations, is sent their outcomes, returns its result.
Procedure = Generator[Any, Any, T]


class Call(NamedTuple):
    """A unary call: its answer, or its ``grpc.RpcError`` thrown in. An interrupted or cancelled
    caller cancels the call."""

    method: Any
    request: Any
    timeout: float


class Sleep(NamedTuple):
    """Wait ``seconds`` of real time."""

    seconds: float


class Wait(NamedTuple):
    """Wait until ``predicate()`` holds, or ``timeout`` seconds passed (None: as long as it
    takes): the predicate's value then. ``on`` is the flavour's waiter for the state the
    predicate reads (a ``threading.Condition``, or ``aio._tasks.Signal``), notified after each
    change of it."""

    on: Any
    predicate: Callable[[], bool]
    timeout: Optional[float]


class Read(NamedTuple):
    """The next message of a streaming call, or its :class:`Ended` once it is over."""

    call: Any


class Shield(NamedTuple):
    """Run ``procedure`` to its end even if the caller is cancelled meanwhile (asyncio; a thread
    cannot be cancelled): its result."""

    procedure: Procedure[Any]


class Ended(NamedTuple):
    """How a stream ended: its status, details, and the server's pushback (rule 17) if it sent
    one (seconds, ``DO_NOT_RETRY``, or None)."""

    code: grpc.StatusCode
    details: str
    pushback: Optional[float] = None


def ended_by(error: Any) -> Ended:
    """A stream's end as its ``grpc.RpcError`` says it (sync or asyncio)."""
    got = error.code()
    code = got if isinstance(got, grpc.StatusCode) else grpc.StatusCode.UNKNOWN
    return Ended(code, error.details() or "", pushback_of(error))


ENDED_OK = Ended(grpc.StatusCode.OK, "")


class Steps(Generic[T]):
    """Steps one procedure through: ``op`` is the operation it waits for, until ``done`` (then
    ``value`` is its result). An error the procedure lets through raises out of ``resume`` or
    ``fail``."""

    def __init__(self, procedure: Procedure[T]) -> None:
        self._procedure = procedure
        self.op: Any = None
        self.done = False
        self.value: Any = None
        self.resume(None)

    def resume(self, outcome: Any) -> None:
        """The operation's outcome."""
        self._step(lambda: self._procedure.send(outcome))

    def fail(self, error: BaseException) -> None:
        """The operation failed (or the caller was interrupted) with ``error``."""
        self._step(lambda: self._procedure.throw(error))

    def settle(self, perform: Callable[[Any], Any]) -> None:
        """Performs the pending operation with ``perform`` (blocking) and steps on."""
        try:
            outcome = perform(self.op)
        except BaseException as e:  # the procedure decides: clean up, retry or let it through
            self.fail(e)
            return
        self.resume(outcome)

    def _step(self, go: Callable[[], Any]) -> None:
        try:
            self.op = go()
        except StopIteration as finished:
            self.done, self.value, self.op = True, finished.value, None
