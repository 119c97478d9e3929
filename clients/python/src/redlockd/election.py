"""Leader election: a candidacy on a Campaign stream, the leadership it wins, and observers.

An election is a lease on its name (in a key space of its own), kept alive on one Campaign
stream by the same machinery as ``Lease.keep_alive`` (``_kept.py``): the leadership has a local
deadline, a guard and loss callbacks (conformance rules 10-14). The candidate makes its own
token, so that a stream that breaks is reopened with it: a leader resumes its leadership with
the same term (``resume``), a waiting candidate campaigns again as the same candidacy.

The rules and waits are written once here (:class:`Candidacy`, :class:`LeadershipState`,
:class:`LeaderStreamState`, as procedures of ``_ops.py``); the sync classes below and
redlockd.aio's only run them, blocking or awaited.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable, Optional, Tuple, Type, TypeVar

import grpc

from . import _durations
from ._calls import CallSettings
from ._kept import KeptCore, KeptStreams, silence_bound
from ._lifetime import Lifetime, guard, stream_loss
from ._ops import Ended, Procedure, Read, Shield, Wait
from ._proto import election_pb2
from ._threads import run
from ._tokens import new_token
from .errors import LeaseLost, LockNotAcquired, LockServiceError, from_rpc_error

__all__ = ["Leadership", "Leader", "LeaderStream", "Observation", "campaigning"]

_log = logging.getLogger("redlockd")

LostCallback = Callable[[LeaseLost], None]
P = TypeVar("P", bound="LeadershipState")


@dataclass(frozen=True)
class Leader:
    """Who leads an election, as everyone may see it: the leader's ``value`` and ``term``."""

    value: str
    #: The leader's fencing token (a uint64): it strictly increases across leaders.
    term: int


def _leader_of(message: election_pb2.Leadership) -> Leader:
    return Leader(value=message.value, term=message.term)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


# --- campaigning ---------------------------------------------------------------------------


class Candidacy:
    """One campaign, for the sync client and the asyncio one alike: its token, its Campaign
    stream and what it sends, and whether it led yet. Answers before the first one that makes a
    leadership go nowhere else; after it, every answer and the end go to the leadership, an
    instance of ``leadership`` (the flavour's class)."""

    def __init__(self, calls: CallSettings, election: str, value: str, ttl: float,
                 leadership: Type["LeadershipState"]) -> None:
        self._calls = calls
        self._election = election
        self._value = value  # what the requests carry
        self._ttl = ttl
        self._guard = guard(ttl)
        self._token = new_token()
        self._leadership_class = leadership
        self._lock = threading.Condition(threading.RLock())
        self._waiter = calls.waiter(self._lock)
        self._leadership: Optional[LeadershipState] = None
        self._ending: Optional[Tuple[grpc.StatusCode, str]] = None
        self._withdrawn = False
        core = KeptCore(f"Campaign of election '{election}'", calls.clock, self._request,
                        self._period, self._answer, self._end, self._may_resume,
                        calls.resume_backoff, self._silence, calls.answered,
                        calls.answer_times)
        self._stream = calls.streams(core, self._lock, self._waiter, calls.election_stub.Campaign)
        self._stream.start()

    # --- the caller's side -------------------------------------------------------------------

    def waiting(self, wait: Optional[float]) -> Procedure["LeadershipState"]:
        """Until the candidate leads (its leadership), the stream ends for good (its failure),
        or ``wait`` passes (the candidacy withdrawn, :class:`LockNotAcquired`). An interrupt or
        a cancel gives the candidacy up."""
        try:
            yield Wait(self._waiter,
                       lambda: self._leadership is not None or self._ending is not None, wait)
            with self._lock:
                if self._leadership is not None:
                    return self._leadership
                if self._ending is not None:
                    raise self._failure(*self._ending)
                self._withdrawn = True  # from now on an answer is resigned, not returned
        except BaseException as e:
            if not isinstance(e, (LockServiceError, GeneratorExit)):
                yield Shield(self._give_up())
            raise
        # Withdraw; a leadership granted in this instant is resigned by the same half-close.
        if (yield from self._stream.half_close(self._calls.call_timeout)) is None:
            self._stream.cancel()
        raise LockNotAcquired(grpc.StatusCode.ABORTED,
                              f"election '{self._election}': not leading within {_ms(wait or 0)}")

    def _give_up(self) -> Procedure[None]:
        with self._lock:
            self._withdrawn = True
            leadership = self._leadership
        if leadership is not None:
            yield from leadership._close()
        else:
            self._stream.half_close_now()

    def _send_value(self, value: str) -> None:
        """A request with ``value`` now, and in every later one (proclaim)."""
        def apply() -> None:
            self._value = value

        self._stream.request(apply)

    # --- the stream's side -------------------------------------------------------------------

    def _request(self, sequence: int, first: bool) -> election_pb2.CampaignRequest:
        request = election_pb2.CampaignRequest(
            election=self._election, value=self._value, sequence=sequence)
        request.ttl.CopyFrom(_durations.to_proto(self._ttl))
        if first:  # only a stream's first request names the candidacy
            request.token = self._token
            # A leader takes its leadership back (same term, never queued); a candidate still
            # waiting campaigns again as the same candidacy.
            request.resume = self._leadership is not None
        return request

    def _period(self) -> float:
        return max(self._ttl / 4, 0.001)

    def _silence(self) -> Optional[float]:
        """A leader's stream is held to the silence bound; a candidate still waiting gets no
        answers until it leads, so it has none to miss."""
        with self._lock:
            return None if self._leadership is None else silence_bound(self._ttl)

    def _may_resume(self, failures: int) -> bool:
        """A leader resumes until its guarded deadline; a candidate still waiting campaigns
        again unless the stream was refused as many times in a row as the retry policy allows
        attempts (then the campaign fails with the stream's status, as before leading)."""
        with self._lock:
            if self._leadership is not None:
                return self._leadership.is_leader
            return not self._withdrawn and failures < self._calls.retry.max_attempts

    def _answer(self, response: election_pb2.CampaignResponse, sent: Optional[float]) -> None:
        with self._lock:
            leadership = self._leadership
            if leadership is None:
                if self._withdrawn or sent is None:
                    return  # withdrawn: the half-close resigns it; undated: ignored
                deadline = sent + _durations.from_proto(response.validity)
                if self._calls.clock.now() >= deadline - self._guard:
                    # Spent on its way here (a long pause of this process): the next request,
                    # at most ttl/4 away, renews at once and its answer counts from later.
                    return
                self._leadership = self._leadership_class(
                    self._calls, self, self._stream, self._election, self._ttl, response.term,
                    response.value, deadline, self._lock, self._waiter)
                self._waiter.notify_all()
                return
        leadership._answer(response, sent)

    def _end(self, code: grpc.StatusCode, details: str, gave_up: bool) -> None:
        with self._lock:
            self._ending = (code, details)
            leadership = self._leadership
            self._waiter.notify_all()
        if leadership is not None:
            leadership._end(code, details, gave_up)

    def _failure(self, code: grpc.StatusCode, details: str) -> LockServiceError:
        if code == grpc.StatusCode.OK:
            return LockServiceError(
                grpc.StatusCode.UNAVAILABLE,
                f"election '{self._election}': the Campaign stream ended before leading")
        return from_rpc_error(_Status(code, details))


class _Status(grpc.RpcError):  # type: ignore[misc]  # grpc is untyped
    """A stream's end as an RpcError, for ``from_rpc_error``."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__()
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


def campaigning(calls: CallSettings, election: str, value: str, ttl: _durations.Seconds,
                wait: Optional[_durations.Seconds], leadership: Type[P]) -> Procedure[P]:
    """Campaigns for ``election`` until leading (a ``leadership``), or ``wait`` passes."""
    ttl_s = _durations.seconds(ttl)
    wait_s = None if wait is None else _durations.seconds(wait)
    if wait_s is not None and wait_s < 0:
        raise LockServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"election '{election}': negative wait {_ms(wait_s)}")
    led = yield from Candidacy(calls, election, value, ttl_s, leadership).waiting(wait_s)
    assert isinstance(led, leadership)
    return led


class LeadershipState:
    """What a leadership is, for the sync :class:`Leadership` and the asyncio one alike: the
    term and value, the lifetime (deadline, guard, loss), what the Campaign stream's answers and
    end do to it, and the procedures of proclaim and resign."""

    def __init__(self, calls: CallSettings, candidacy: Candidacy, stream: KeptStreams,
                 election: str, ttl: float, term: int, value: str, deadline: float,
                 lock: "threading.Condition", waiter: Any) -> None:
        self._calls = calls
        self._campaign = candidacy
        self._stream = stream
        self._election = election
        self._term = term
        self._value = value
        self._lock = lock
        self._waiter = waiter
        self._lost_event = calls.event()
        self._answers = 0
        self._resigned = False
        self._life = Lifetime(f"leadership of election '{election}'", ttl, deadline, lock,
                              self._lost_now, calls.clock, calls.dispatch, waiter.notify_all)

    # --- what the leader reads ---------------------------------------------------------------

    @property
    def election(self) -> str:
        return self._election

    @property
    def term(self) -> int:
        """The leadership's fencing token (a uint64): it strictly increases across the
        election's leaders, and may rise (never fall) while leading, after a node fault. Read
        it for every write the leader makes."""
        with self._lock:
            return self._term

    @property
    def value(self) -> str:
        """The value Leader and Observe report now (as the latest answer showed it)."""
        return self._value

    @property
    def deadline(self) -> float:
        """The local deadline on ``time.monotonic()``: send time + validity, without the guard."""
        return self._life.deadline

    @property
    def remaining(self) -> float:
        """Seconds left while leading (up to the guard before the deadline); 0 once not."""
        return self._life.remaining()

    @property
    def lost_error(self) -> Optional[LeaseLost]:
        """Why the leadership was lost, or None while it is not."""
        return self._life.lost

    @property
    def is_leader(self) -> bool:
        """True until a guard before the local deadline (unless a renewal moved it), the loss,
        or the resignation."""
        return self._life.valid()

    def on_lost(self: P, callback: LostCallback) -> P:
        """Calls ``callback(error)`` once when the leadership is lost, at once (on this thread)
        if it already is: from a client thread (on the event loop in redlockd.aio). Never after
        a resignation."""
        self._life.on_lost(callback)
        return self

    def __repr__(self) -> str:
        state = "resigned" if self._resigned else "lost" if self._life.lost is not None else (
            "leading" if self.is_leader else "expired")
        return (f"{type(self).__name__}(election={self._election!r}, term={self._term}, "
                f"value={self._value!r}, is_leader={self.is_leader}, {state})")

    __str__ = __repr__

    # --- procedures --------------------------------------------------------------------------

    def _proclaim(self, value: str) -> Procedure[None]:
        with self._lock:
            self._raise_if_over()
            seen = self._answers
        self._campaign._send_value(value)
        shown = yield Wait(self._waiter, lambda: self._life.over() or (
            self._answers > seen and self._value == value), self._calls.call_timeout)
        with self._lock:
            self._raise_if_over()
        if not shown:
            raise LockServiceError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"election '{self._election}': no answer showed the new value within "
                f"{_ms(self._calls.call_timeout)}")

    def _resign(self) -> Procedure[bool]:
        with self._lock:
            if self._resigned:
                return False
            self._resigned = True
            lost = self._life.finish()
        if lost is not None:
            return False
        ending = yield from self._stream.half_close(self._calls.call_timeout)
        if ending is None:
            _log.debug("election '%s': no end of the Campaign stream within %s after resigning",
                       self._election, _ms(self._calls.call_timeout))
            self._stream.cancel()  # the leadership runs out at its validity
            return False
        return bool(ending[0] == grpc.StatusCode.OK)

    def _close(self) -> Procedure[None]:
        try:
            yield from self._resign()
        except Exception as e:  # pragma: no cover - resign raises nothing it expects
            _log.debug("resigning election '%s' failed: %s", self._election, e)

    # --- called by the stream and the timer --------------------------------------------------

    def _raise_if_over(self) -> None:  # under self._lock
        if self._life.lost is not None:
            raise self._life.lost
        if self._resigned:
            raise LeaseLost(grpc.StatusCode.FAILED_PRECONDITION,
                            f"election '{self._election}': resigned")

    def _answer(self, response: election_pb2.CampaignResponse, sent: Optional[float]) -> None:
        if sent is None:
            return  # an answer this client cannot date is ignored
        with self._lock:
            if self._life.over():
                return
            self._life.advance(sent + _durations.from_proto(response.validity))
            self._value = response.value
            # A renewal after a node fault may report a higher fencing token: the term follows.
            if response.term > self._term:
                self._term = response.term
            self._answers += 1
            self._waiter.notify_all()

    def _end(self, code: grpc.StatusCode, details: str, gave_up: bool) -> None:
        self._life.lose(stream_loss(f"leadership of election '{self._election}'", "Campaign stream",
                                    f"election '{self._election}'", code, details, gave_up))

    def _lost_now(self, error: LeaseLost) -> None:
        """The loss was declared: stop renewing and give the leadership back by half-closing
        (the server resigns it), so that the next candidate need not wait out the ttl; a stream
        that does not end within the call timeout is left (cancelled)."""
        self._lost_event.set()
        with self._lock:
            self._waiter.notify_all()
        stream = self._stream
        if stream.ending is not None:
            return  # the stream is over: nothing to give back through it
        stream.half_close_now()
        clock = self._calls.clock

        def leave_if_still_open() -> None:
            if stream.ending is None:
                stream.cancel()

        clock.at(clock.now() + self._calls.call_timeout, leave_if_still_open)


class Leadership(LeadershipState):
    """Leading ``election``, kept alive on the Campaign stream that won it.

    Use it as a context manager: leaving the block resigns. The local deadline is the send
    time of the request an answer echoes plus the validity it carries (on ``time.monotonic()``),
    moved only forward; :attr:`is_leader` holds until a guard before it, and the leadership is
    reported lost then unless a renewal moved it. A stream that breaks (a replica shutting
    down, a lost connection) is reopened with the candidate's token and ``resume``: the
    leadership goes on with the same term, and no loss is reported.
    """

    @property
    def lost(self) -> threading.Event:
        """Set the moment the leadership is lost (before the loss callbacks run); never by a
        resignation. Work that runs while leading polls it (``lost.is_set()``) or waits on it:
        a thread cannot be interrupted."""
        event: threading.Event = self._lost_event
        return event

    def proclaim(self, value: str) -> "Leadership":
        """Makes ``value`` the value everyone sees, keeping the term; returns once an answer
        shows it. Raises the loss (:class:`LeaseLost`) if the leadership is lost first, and
        :class:`LockServiceError` (``DEADLINE_EXCEEDED``) when no answer showed it within the
        call timeout."""
        run(self._proclaim(value))
        return self

    def resign(self) -> bool:
        """Resigns by half-closing the stream and waits for its end (the call timeout). True only
        on the first call and only when the stream ended OK; no loss is reported afterwards."""
        return run(self._resign())

    def close(self) -> None:
        """Resigns; never raises."""
        run(self._close())

    def __enter__(self) -> "Leadership":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()


# --- observing -----------------------------------------------------------------------------

ObserveCallback = Callable[[Optional[Leader]], None]


class StateFilter:
    """Which observed states are news (rule 13), for every form of observation: after a reopen,
    only a state that differs from the last one delivered, and whose term is not below the last
    leader's term seen."""

    def __init__(self) -> None:
        self._delivered = False
        self.last: Optional[Leader] = None
        self._last_term = 0

    def take(self, response: election_pb2.ObserveResponse) -> Tuple[bool, Optional[Leader]]:
        """Whether ``response`` is news, and the state it reports."""
        state = _leader_of(response.leader) if response.HasField("leader") else None
        if self._delivered and state == self.last:
            return False, state  # nothing new (a reopened stream starts with the state it saw last)
        if state is not None:
            if state.term < self._last_term:
                return False, state  # older than a leader already seen
            self._last_term = state.term
        self._delivered = True
        self.last = state
        return True, state


#: What :meth:`LeaderStreamState._next` returns once the observation is closed.
DONE = object()


class LeaderStreamState:
    """An election's leader (or None), then every change, for the sync :class:`LeaderStream`
    and the asyncio one alike. The Observe stream is read by whoever asks for the next state;
    when it ends without :meth:`close`, it is opened again (with the client's retry backoff,
    without a limit on attempts); only a state that is news is returned (see
    :class:`StateFilter`). A reader slower than the changes gets the latest state."""

    def __init__(self, calls: CallSettings, election: str) -> None:
        self._calls = calls
        self._election = election
        self._lock = threading.Condition()
        self._waiter = calls.waiter(self._lock)
        self._closed = False
        self._call: Any = None
        self._filter = StateFilter()
        self._failures = 0
        self._handed: Optional[Any] = None  # the answer returned last: processed at the next read

    @property
    def election(self) -> str:
        return self._election

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Ends the stream (from any thread): a reader waiting for the next state gets none."""
        with self._lock:
            self._closed = True
            call, self._call = self._call, None
            self._waiter.notify_all()
        if call is not None:
            call.cancel()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(election={self._election!r}, "
                f"{'closed' if self._closed else 'open'}, last={self._filter.last!r})")

    __str__ = __repr__

    def _next(self) -> Procedure[Any]:
        """The next state that is news, or :data:`DONE` once closed."""
        if self._handed is not None:
            handed, self._handed = self._handed, None
            self._calls.processed(handed)
        while True:
            call = self._open()
            if call is None:
                return DONE
            message = yield Read(call)
            if not isinstance(message, Ended):
                self._failures = 0
                news, state = self._filter.take(message)
                if news:
                    self._handed = message
                    return state
                self._calls.processed(message)
                continue
            with self._lock:
                if self._call is call:
                    self._call = None
                if self._closed:
                    return DONE
            self._failures += 1
            delay = self._calls.reopen_wait(self._failures, message.pushback)
            _log.debug("observer of election '%s': stream ended %s, reopening in %s",
                       self._election, message.code.name, _ms(delay))
            if (yield Wait(self._waiter, lambda: self._closed, delay)):
                return DONE

    def _open(self) -> Any:
        with self._lock:
            if self._closed:
                return None
            if self._call is None:
                try:
                    self._call = self._calls.election_stub.Observe(
                        election_pb2.ObserveRequest(election=self._election))
                except Exception:  # the channel was closed under it: nothing to reopen
                    _log.warning("observer of election '%s' stopped: cannot open a stream",
                                 self._election, exc_info=True)
                    return None
            return self._call


class LeaderStream(LeaderStreamState):
    """An election's leader (or None), then every change: an iterator that is also a context
    manager. Each ``next()`` blocks until the next change; leaving the ``with`` block (or
    :meth:`close`, from any thread) ends the iteration.

    ::

        with client.observe("scheduler") as changes:
            for leader in changes:
                route_to(leader.value if leader else None)

    It reads the Observe stream on the thread that iterates (see :class:`LeaderStreamState`).
    """

    def __iter__(self) -> "LeaderStream":
        return self

    def __next__(self) -> Optional[Leader]:
        state = run(self._next())
        if state is DONE:
            raise StopIteration
        leader: Optional[Leader] = state
        return leader

    def __enter__(self) -> "LeaderStream":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()


class ObservationBase:
    """An observation's callbacks, for the sync :class:`Observation` and the asyncio one alike:
    each state delivered in order, none once closed, a callback that raises logged."""

    def __init__(self, stream: LeaderStreamState, callback: ObserveCallback) -> None:
        self._stream = stream
        self._callback = callback

    @property
    def election(self) -> str:
        return self._stream.election

    def __repr__(self) -> str:
        return f"{type(self).__name__}{repr(self._stream)[len(type(self._stream).__name__):]}"

    __str__ = __repr__

    def _deliver(self, state: Optional[Leader]) -> bool:
        """Calls back with ``state``; False once closed (nothing delivered then)."""
        if self._stream.closed:
            return False
        try:
            self._callback(state)
        except Exception:
            _log.exception("an observe callback of election '%s' failed", self.election)
        return True


class Observation(ObservationBase):
    """Calls back with an election's leader (or None) and every change, until :meth:`close`:
    a thread of its own iterates a :class:`LeaderStream` and runs the callbacks, in order.
    A context manager: leaving the block closes it.
    """

    def __init__(self, stream: LeaderStream, callback: ObserveCallback) -> None:
        super().__init__(stream, callback)
        self._states = stream
        self._delivering = threading.RLock()  # held while a callback runs
        self._thread = threading.Thread(target=self._run, name=f"redlockd-observe {stream.election}",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stops observing. Once it returns no callback runs (it waits for one that is
        running, unless called from that callback)."""
        self._stream.close()
        with self._delivering:  # a delivery under way finishes first; later ones see closed
            pass

    def __enter__(self) -> "Observation":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def _run(self) -> None:
        try:
            for state in self._states:
                with self._delivering:
                    if not self._deliver(state):
                        return
        except Exception:  # a bug here must not end the observation silently
            _log.exception("observer of election '%s' failed", self.election)
