"""Leader election: a candidacy on a Campaign stream, the leadership it wins, and observers.

An election is a lease on its name (in a key space of its own), kept alive on one Campaign
stream by the same machinery as ``Lease.keep_alive`` (``_kept.py``): the leadership has a local
deadline, a guard and loss callbacks (conformance rules 10-14). The candidate makes its own
token, so that a stream that breaks is reopened with it: a leader resumes its leadership with
the same term (``resume``), a waiting candidate campaigns again as the same candidacy.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable, Optional, Tuple, Type

import grpc

from . import _durations
from ._calls import Calls, CallSettings
from ._kept import KeptStream, Lifetime, guard, on_a_thread, silence_bound, stream_loss
from ._proto import election_pb2
from ._tokens import new_token
from .errors import LeaseLost, LockNotAcquired, LockServiceError, from_rpc_error

__all__ = ["Leadership", "Leader", "LeaderStream", "Observation", "campaign"]

_log = logging.getLogger("redlockd")

LostCallback = Callable[[LeaseLost], None]


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


class CandidacyState:
    """One campaign, for the sync client and the asyncio one alike: its token, what its Campaign
    stream sends, and whether it led yet. Answers before the first one that makes a leadership
    go nowhere else; after it, every answer and the end go to the leadership. The stream (and
    the leadership it makes, :meth:`_lead`) are the subclass's."""

    def __init__(self, settings: CallSettings, election: str, value: str, ttl: float) -> None:
        self._settings = settings
        self._election = election
        self._value = value  # what the requests carry
        self._ttl = ttl
        self._guard = guard(ttl)
        self._token = new_token()
        self._lock = threading.Condition(threading.RLock())
        self._leadership: Optional[LeadershipState] = None
        self._ending: Optional[Tuple[grpc.StatusCode, str]] = None
        self._withdrawn = False
        self._stream: Any = None  # the subclass's KeptStream

    def _lead(self, term: int, value: str, deadline: float) -> "LeadershipState":
        raise NotImplementedError

    def _changed(self) -> None:  # under self._lock: wake whoever waits for the outcome
        self._lock.notify_all()

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
                return self._leadership.is_leader()
            return not self._withdrawn and failures < self._settings.retry.max_attempts

    def _answer(self, response: election_pb2.CampaignResponse, sent: Optional[float]) -> None:
        with self._lock:
            leadership = self._leadership
            if leadership is None:
                if self._withdrawn or sent is None:
                    return  # withdrawn: the half-close resigns it; undated: ignored
                deadline = sent + _durations.from_proto(response.validity)
                if self._settings.clock.now() >= deadline - self._guard:
                    # Spent on its way here (a long pause of this process): the next request,
                    # at most ttl/4 away, renews at once and its answer counts from later.
                    return
                self._leadership = self._lead(response.term, response.value, deadline)
                self._changed()
                return
        leadership._answer(response, sent)

    def _end(self, code: grpc.StatusCode, details: str, gave_up: bool) -> None:
        with self._lock:
            self._ending = (code, details)
            leadership = self._leadership
            self._changed()
        if leadership is not None:
            leadership._end(code, details, gave_up)

    def _send_value(self, value: str) -> None:
        def apply() -> None:
            self._value = value

        self._stream.request_now(apply)

    def _failure(self, code: grpc.StatusCode, details: str) -> LockServiceError:
        if code == grpc.StatusCode.OK:
            return LockServiceError(
                grpc.StatusCode.UNAVAILABLE,
                f"election '{self._election}': the Campaign stream ended before leading")
        return from_rpc_error(_Status(code, details))

    def _not_within(self, wait: Optional[float]) -> LockNotAcquired:
        return LockNotAcquired(grpc.StatusCode.ABORTED,
                               f"election '{self._election}': not leading within {_ms(wait or 0)}")


class _Candidacy(CandidacyState):
    """A campaign of the sync client, on a :class:`KeptStream`."""

    def __init__(self, calls: Calls, election: str, value: str, ttl: float) -> None:
        super().__init__(calls, election, value, ttl)
        self._calls = calls
        self._stream = KeptStream(
            f"Campaign of election '{election}'", self._lock, calls.election_stub.Campaign,
            self._request, self._period, self._answer, self._end, self._may_resume,
            calls.resume_backoff, calls.clock, calls.answered, self._silence)
        self._stream.start()

    def _lead(self, term: int, value: str, deadline: float) -> "Leadership":
        return Leadership(self._calls, self, self._stream, self._election, self._ttl, term,
                          value, deadline, self._lock)

    # --- the caller's side -------------------------------------------------------------------

    def wait(self, wait: Optional[float]) -> "Leadership":
        """Blocks until the candidate leads, the stream ends for good, or ``wait`` passes."""
        until = None if wait is None else time.monotonic() + wait
        try:
            with self._lock:
                while self._leadership is None and self._ending is None:
                    if until is None:
                        self._lock.wait()
                        continue
                    left = until - time.monotonic()
                    if left <= 0:
                        break
                    self._lock.wait(left)
                if self._leadership is not None:
                    assert isinstance(self._leadership, Leadership)
                    return self._leadership
                if self._ending is not None:
                    raise self._failure(*self._ending)
                self._withdrawn = True  # from now on an answer is resigned, not returned
        except BaseException as e:
            if not isinstance(e, LockServiceError):  # interrupted: give the candidacy up
                self._give_up()
            raise
        # Withdraw; a leadership granted in this instant is resigned by the same half-close.
        if self._stream.half_close(self._calls.call_timeout) is None:
            self._stream.cancel()
        raise self._not_within(wait)

    def _give_up(self) -> None:
        with self._lock:
            self._withdrawn = True
            leadership = self._leadership
        if isinstance(leadership, Leadership):
            leadership.close()
        else:
            self._stream.half_close_async()


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


def campaign(calls: Calls, election: str, value: str, ttl: _durations.Seconds,
             wait: Optional[_durations.Seconds]) -> "Leadership":
    ttl_s = _durations.seconds(ttl)
    wait_s = None if wait is None else _durations.seconds(wait)
    if wait_s is not None and wait_s < 0:
        raise LockServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"election '{election}': negative wait {_ms(wait_s)}")
    return _Candidacy(calls, election, value, ttl_s).wait(wait_s)


class LeadershipState:
    """What a leadership is, for the sync :class:`Leadership` and the asyncio one alike: the
    term and value, the lifetime (deadline, guard, loss), what the Campaign stream's answers and
    end do to it. Resigning and proclaiming are the subclass's."""

    def __init__(self, settings: CallSettings, candidacy: CandidacyState, stream: Any,
                 election: str, ttl: float, term: int, value: str, deadline: float,
                 lock: "threading.Condition",
                 dispatch: Callable[[Callable[[LeaseLost], None], LeaseLost, str], None]
                 = on_a_thread) -> None:
        self._settings = settings
        self._candidacy = candidacy
        self._stream = stream
        self._election = election
        self._term = term
        self._value = value
        self._lock = lock
        self._answers = 0
        self._resigned = False
        self._life = Lifetime(f"leadership of election '{election}'", ttl, deadline, lock,
                              self._lost_now, settings.clock, dispatch)

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

    def is_leader(self) -> bool:
        """True until a guard before the local deadline (unless a renewal moved it), the loss,
        or the resignation."""
        return self._life.valid()

    def on_lost(self, callback: LostCallback) -> "LeadershipState":
        """Calls ``callback(error)`` once, from a client thread, when the leadership is lost; at
        once (on this thread) if it already is. Never after a resignation."""
        self._life.on_lost(callback)
        return self

    def __repr__(self) -> str:
        state = "resigned" if self._resigned else "lost" if self._life.lost is not None else (
            "leading" if self.is_leader() else "expired")
        return (f"{type(self).__name__}(election={self._election!r}, term={self._term}, "
                f"value={self._value!r}, is_leader={self.is_leader()}, {state})")

    __str__ = __repr__

    # --- called by the stream and the timer --------------------------------------------------

    def _raise_if_over(self) -> None:  # under self._lock
        if self._life.lost is not None:
            raise self._life.lost
        if self._resigned:
            raise LeaseLost(grpc.StatusCode.FAILED_PRECONDITION,
                            f"election '{self._election}': resigned")

    def _changed(self) -> None:  # under self._lock: wake whoever waits for an answer
        self._lock.notify_all()

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
            self._changed()

    def _end(self, code: grpc.StatusCode, details: str, gave_up: bool) -> None:
        self._life.lose(stream_loss(f"leadership of election '{self._election}'", "Campaign stream",
                                    f"election '{self._election}'", code, details, gave_up))

    def _lost_now(self, error: LeaseLost) -> None:
        """The loss was declared: stop renewing and give the leadership back by half-closing
        (the server resigns it), so that the next candidate need not wait out the ttl; a stream
        that does not end within the call timeout is left (cancelled)."""
        with self._lock:
            self._changed()
        if self._stream.ending is not None:
            return  # the stream is over: nothing to give back through it
        self._stream.half_close_async()
        stream = self._stream
        clock = self._settings.clock

        def leave_if_still_open() -> None:
            if stream.ending is None:
                stream.cancel()

        clock.at(clock.now() + self._settings.call_timeout, leave_if_still_open)


class Leadership(LeadershipState):
    """Leading ``election``, kept alive on the Campaign stream that won it.

    Use it as a context manager: leaving the block resigns. The local deadline is the send
    time of the request an answer echoes plus the validity it carries (on ``time.monotonic()``),
    moved only forward; :meth:`is_leader` holds until a guard before it, and the leadership is
    reported lost then unless a renewal moved it. A stream that breaks (a replica shutting
    down, a lost connection) is reopened with the candidate's token and ``resume``: the
    leadership goes on with the same term, and no loss is reported.
    """

    def __init__(self, calls: Calls, candidacy: _Candidacy, stream: KeptStream, election: str,
                 ttl: float, term: int, value: str, deadline: float,
                 lock: "threading.Condition") -> None:
        self._lost_event = threading.Event()
        super().__init__(calls, candidacy, stream, election, ttl, term, value, deadline, lock)
        self._calls = calls
        self._kept: KeptStream = stream
        self._campaign: _Candidacy = candidacy

    @property
    def lost(self) -> threading.Event:
        """Set the moment the leadership is lost (before the loss callbacks run); never by a
        resignation. Work that runs while leading polls it (``lost.is_set()``) or waits on it:
        a thread cannot be interrupted."""
        return self._lost_event

    def _lost_now(self, error: LeaseLost) -> None:
        self._lost_event.set()
        super()._lost_now(error)

    # --- what the leader does ----------------------------------------------------------------

    def proclaim(self, value: str) -> "Leadership":
        """Makes ``value`` the value everyone sees, keeping the term; returns once an answer
        shows it. Raises the loss (:class:`LeaseLost`) if the leadership is lost first, and
        :class:`LockServiceError` (``DEADLINE_EXCEEDED``) when no answer showed it within the
        call timeout."""
        with self._lock:
            self._raise_if_over()
            seen = self._answers
        self._campaign._send_value(value)
        with self._lock:
            shown = self._lock.wait_for(
                lambda: self._life.over() or (self._answers > seen and self._value == value),
                self._calls.call_timeout)
            self._raise_if_over()
            if not shown:
                raise LockServiceError(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"election '{self._election}': no answer showed the new value within "
                    f"{_ms(self._calls.call_timeout)}")
        return self

    def resign(self) -> bool:
        """Resigns by half-closing the stream and waits for its end (the call timeout). True only
        on the first call and only when the stream ended OK; no loss is reported afterwards."""
        with self._lock:
            if self._resigned:
                return False
            self._resigned = True
            lost = self._life.finish()
        if lost is not None:
            return False
        ending = self._stream.half_close(self._calls.call_timeout)
        if ending is None:
            _log.debug("election '%s': no end of the Campaign stream within %s after resigning",
                       self._election, _ms(self._calls.call_timeout))
            self._stream.cancel()  # the leadership runs out at its validity
            return False
        return bool(ending[0] == grpc.StatusCode.OK)

    def close(self) -> None:
        """Resigns; never raises."""
        try:
            self.resign()
        except Exception as e:  # pragma: no cover - resign raises nothing it expects
            _log.debug("resigning election '%s' failed: %s", self._election, e)

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


class LeaderStream:
    """An election's leader (or None), then every change: an iterator that is also a context
    manager. Each ``next()`` blocks until the next change; leaving the ``with`` block (or
    :meth:`close`, from any thread) ends the iteration.

    ::

        with client.observe("scheduler") as changes:
            for leader in changes:
                route_to(leader.value if leader else None)

    It reads the Observe stream on the thread that iterates. When the stream ends without
    :meth:`close`, it is opened again (with the client's retry backoff, without a limit on
    attempts); only a state that is news is returned (see :class:`StateFilter`). A reader slower
    than the changes gets the latest state.
    """

    def __init__(self, calls: Calls, election: str) -> None:
        self._calls = calls
        self._election = election
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._call: Any = None
        self._filter = StateFilter()
        self._failures = 0
        self._handed: Optional[Any] = None  # the answer returned last: processed at the next read

    @property
    def election(self) -> str:
        return self._election

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Ends the stream; an iteration blocked in ``next()`` ends (StopIteration)."""
        with self._lock:
            self._closed.set()
            call = self._call
        if call is not None:
            call.cancel()

    def __iter__(self) -> "LeaderStream":
        return self

    def __next__(self) -> Optional[Leader]:
        if self._handed is not None:
            handed, self._handed = self._handed, None
            self._calls.processed(handed)
        while True:
            call = self._open()
            if call is None:
                raise StopIteration
            try:
                response = next(call)
            except StopIteration:
                code: Any = grpc.StatusCode.OK
                error: Any = None
            except grpc.RpcError as e:
                code, error = e.code(), e
            else:
                self._failures = 0
                news, state = self._filter.take(response)
                if news:
                    self._handed = response
                    return state
                self._calls.processed(response)
                continue
            with self._lock:
                self._call = None
            if self._closed.is_set():
                raise StopIteration
            self._failures += 1
            delay = self._calls.reopen_wait(self._failures, error)
            _log.debug("observer of election '%s': stream ended %s, reopening in %s",
                       self._election, getattr(code, "name", code), _ms(delay))
            if self._closed.wait(delay):
                raise StopIteration

    def _open(self) -> Any:
        with self._lock:
            if self._closed.is_set():
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

    def __enter__(self) -> "LeaderStream":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"LeaderStream(election={self._election!r}, "
                f"{'closed' if self._closed.is_set() else 'open'}, last={self._filter.last!r})")

    __str__ = __repr__


class Observation:
    """Calls back with an election's leader (or None) and every change, until :meth:`close`:
    a thread of its own iterates a :class:`LeaderStream` and runs the callbacks, in order.
    A context manager: leaving the block closes it.
    """

    def __init__(self, calls: Calls, election: str, callback: ObserveCallback) -> None:
        self._election = election
        self._callback = callback
        self._stream = LeaderStream(calls, election)
        self._delivering = threading.RLock()  # held while a callback runs
        self._thread = threading.Thread(target=self._run, name=f"redlockd-observe {election}",
                                        daemon=True)
        self._thread.start()

    @property
    def election(self) -> str:
        return self._election

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

    def __repr__(self) -> str:
        return repr(self._stream).replace("LeaderStream", "Observation", 1)

    __str__ = __repr__

    def _run(self) -> None:
        try:
            for state in self._stream:
                with self._delivering:
                    if self._stream.closed:
                        return
                    try:
                        self._callback(state)
                    except Exception:
                        _log.exception("an observe callback of election '%s' failed",
                                       self._election)
        except Exception:  # a bug here must not end the observation silently
            _log.exception("observer of election '%s' failed", self._election)
