"""The kept-stream machinery, shared by kept leases (KeepAlive) and leaderships (Campaign).

Two parts, as client-java's Lifetime and RenewalStream:

- :class:`Lifetime`: the local deadline, the guard before it, and the loss reported once.
  The deadline is the send time of the request an answer echoes plus the validity it carries,
  on ``time.monotonic()``, moved only forward by answers; a ttl change sent through the stream
  may cut it at once (rule 15). The check runs on the clock's timer (the shared
  scheduler thread; the event loop in redlockd.aio, whose stream is aio/_stream.py).
- :class:`KeptStream`: the stream itself. A request at once, then one every ttl/4 with a rising
  sequence (and one at once for each change); each answer dated by the send time of the
  request whose sequence it echoes. A stream that ends with a status that does not say the
  grant is gone (UNAVAILABLE when a replica shuts down, a broken connection) is reopened on the
  same channel with the same first request, backing off with jitter, while its owner says it is
  worth it (rule 14). Sequences keep rising across the streams.

Why the send time: the server counts a renewal's validity from when it finished; its answer may
then spend any time on the way (a congested link, a long pause in this process). The renewal
began after the request arrived, so the local deadline is never later than the server's. To keep
that send time recent, a request goes out every ttl/4; each renews at once, and the server's own
ttl/3 timer, restarted by each renewal, then never fires first.

Threads: gRPC consumes each stream's request generator on a thread of its own (the generator
paces the requests itself); one daemon thread per kept grant reads the answers, and reopens.
"""
from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

import grpc

from ._clock import SYSTEM, Cancellable, Clock
from ._pushback import DO_NOT_RETRY, jittered, pushback_of
from .errors import LeaseLost

_log = logging.getLogger("redlockd")


def stream_loss(kept: str, stream: str, subject: str, code: grpc.StatusCode, details: str,
                gave_up: bool) -> LeaseLost:
    """The loss that a kept stream's end for good means, in the words of what it kept: ``kept``
    names the grant ("lease on resource 'r'"), ``stream`` the stream ("KeepAlive stream") and
    ``subject`` what it is for ("resource 'r'"). ``gave_up``: the guarded deadline passed while
    the stream was down."""
    if gave_up:
        return LeaseLost(grpc.StatusCode.DEADLINE_EXCEEDED,
                         f"{kept} ran out while its {stream} was down (last end: {code.name})")
    if code == grpc.StatusCode.OK:
        return LeaseLost(grpc.StatusCode.UNAVAILABLE, f"the {stream} of {subject} ended unexpectedly")
    return LeaseLost(code, details or f"the {stream} of {subject} ended {code.name}")


def silent_end(bound: Optional[float]) -> Ending:
    """What a stream left for its silence says (in the log): UNAVAILABLE, its replica did not
    answer within ``bound``."""
    within = "" if bound is None else f" within {bound * 1000:.0f} ms"
    return grpc.StatusCode.UNAVAILABLE, f"no answer{within}: the stream was silent"


#: The guard never exceeds this: a long ttl should not give up much of its validity.
MAX_GUARD = 0.1

#: How many send times are kept. An answer echoes the sequence the server had when its renewal
#: began, normally one of the last two or three; one older than this is too old to matter.
_SENT_KEPT = 16

#: Statuses that end a kept stream for good: the grant is gone (NOT_FOUND) or the server will
#: not have it renewed by this caller whatever replica it asks. Anything else is resumed (OK
#: unasked is a loss too, see KeptStream).
FINAL_CODES = frozenset({
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.INVALID_ARGUMENT,
})

Ending = Tuple[grpc.StatusCode, str]
LostCallback = Callable[[LeaseLost], None]


def guard(ttl: float) -> float:
    """How long before its deadline a lease stops counting as valid: ttl/20, at most 100 ms.

    The loss is then reported before the deadline itself (the moment another holder may be
    granted the lock) has passed, even by a timer that runs a little late.
    """
    return min(ttl / 20, MAX_GUARD)


def silence_bound(ttl: float) -> float:
    """How long a kept stream may leave its oldest unanswered request without an answer before
    it counts as broken: ttl/4. A replica that stopped (a frozen host, a partition, a proxy that
    stopped forwarding) keeps its connection open and says nothing; waiting for the guarded
    deadline would lose a grant that another replica could renew. One renewal period is enough
    for a healthy replica: it answers each request after one Redis round, and the next request
    goes out a period later anyway."""
    return ttl / 4


#: A stream opened to replace a silent one is held to this part of the silence bound until its
#: first answer: round_robin may have put it on the silent replica again (it keeps that
#: replica's connection until a keepalive ping finds it dead, up to 3 s), and the next pick goes
#: to another. An answer that comes later still counts (the stream is superseded, not dropped).
REPLACEMENT_BOUND = 1 / 3


def bound_of(bound: Optional[float], replacing: bool, answered: bool) -> Optional[float]:
    """The silence bound of the open stream: ``bound`` (None: no answers to expect), or a part of
    it (:data:`REPLACEMENT_BOUND`) for a stream ``replacing`` a silent one that has not
    ``answered`` yet."""
    if bound is None or not replacing or answered:
        return bound
    return bound * REPLACEMENT_BOUND


def shortened_deadline(sent: float, ttl: float) -> float:
    """The latest a grant renewed by a request sent at ``sent`` with ``ttl`` may be believed
    in: the request arrives after ``sent``, and the server keeps the drift (ttl * 0.01 + 2 ms)."""
    return sent + ttl * (1 - 0.01) - 0.002


class SentRequests:
    """When the last few requests were sent, by sequence."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at: "collections.OrderedDict[int, float]" = collections.OrderedDict()

    def record(self, sequence: int, sent: float) -> None:
        with self._lock:
            self._at[sequence] = sent
            while len(self._at) > _SENT_KEPT:
                self._at.popitem(last=False)

    def sent_at(self, sequence: int) -> Optional[float]:
        with self._lock:
            return self._at.get(sequence)

    def first_sent_from(self, sequence: int) -> Optional[float]:
        """The send time of ``sequence``, or of the oldest request kept after it (one too old
        to be kept was sent earlier still: a later time only delays a silence by a period)."""
        with self._lock:
            for kept, sent in self._at.items():
                if kept >= sequence:
                    return sent
            return None


def on_a_thread(lose: Callable[[LeaseLost], None], error: LeaseLost, what: str) -> None:
    """How the sync client runs a loss its timer found: not on the timer thread, so that a slow
    callback does not delay other grants' checks."""
    threading.Thread(target=lose, args=(error,), name=f"redlockd-lost {what}", daemon=True).start()


def run_callback(callback: LostCallback, error: LeaseLost) -> None:
    try:
        callback(error)
    except Exception:
        _log.exception("a loss callback failed")


# --- the deadline ----------------------------------------------------------------------------


class Lifetime:
    """A grant's local deadline, guard and loss (rules 5 and 7), for a lease or a leadership.

    ``what`` names it in messages ("lease on resource 'x'"). ``on_loss(error)`` runs once when
    the loss is declared, before the callbacks and outside the lock: the owner stops renewing
    and gives the grant back there. ``lock`` is shared with the owner and its stream.
    """

    def __init__(self, what: str, ttl: float, deadline: float,
                 lock: "threading.Condition", on_loss: Callable[[LeaseLost], None],
                 clock: Clock = SYSTEM,
                 dispatch: Callable[[Callable[[LeaseLost], None], LeaseLost, str], None]
                 = on_a_thread) -> None:
        self.lock = lock
        self._clock = clock
        self._dispatch = dispatch
        self._what = what
        self._ttl = ttl
        self._guard = guard(ttl)
        self._deadline = deadline
        self._on_loss = on_loss
        self._finished = False  # released or resigned by the holder
        self._lost: Optional[LeaseLost] = None
        self._callbacks: List[LostCallback] = []
        self._check: Optional[Cancellable] = None
        with self.lock:
            self._schedule_check()

    @property
    def ttl(self) -> float:
        return self._ttl

    @property
    def guard(self) -> float:
        return self._guard

    @property
    def deadline(self) -> float:
        return self._deadline

    @property
    def lost(self) -> Optional[LeaseLost]:
        return self._lost

    @property
    def finished(self) -> bool:
        return self._finished

    def over(self) -> bool:
        return self._finished or self._lost is not None

    def valid(self) -> bool:
        return (not self._finished and self._lost is None
                and self._clock.now() < self._deadline - self._guard)

    def remaining(self) -> float:
        """Seconds left while valid (up to the guard before the deadline); 0 once not valid."""
        with self.lock:
            if not self.valid():
                return 0.0
            return max(0.0, self._deadline - self._guard - self._clock.now())

    # --- moving the deadline -----------------------------------------------------------------

    def advance(self, candidate: float) -> None:
        """An answer's deadline: moves forward only (an answer reporting an earlier renewal, or
        jeopardy, may arrive after a later one). The pending check sees it when it runs."""
        with self.lock:
            if not self.over() and candidate > self._deadline:
                self._deadline = candidate

    def set(self, ttl: float, deadline: float) -> None:
        """A unary Extend's outcome: the new ttl (and guard) and deadline, earlier or later."""
        with self.lock:
            if self.over():
                return
            self._ttl = ttl
            self._guard = guard(ttl)
            self._deadline = deadline
            self._schedule_check()

    def change_ttl(self, ttl: float, sent: float) -> None:
        """A request with a new ttl went out at ``sent``: the guard follows the ttl, and the
        deadline is cut at once to what that renewal may leave, if that is earlier (rule 15)."""
        with self.lock:
            if self.over():
                return
            self._ttl = ttl
            self._guard = guard(ttl)
            self._deadline = min(self._deadline, shortened_deadline(sent, ttl))
            self._schedule_check()

    # --- the end -----------------------------------------------------------------------------

    def finish(self) -> Optional[LeaseLost]:
        """The holder released or resigned: no loss is reported from now on. Returns the loss
        that came first, if one did."""
        with self.lock:
            self._finished = True
            self._cancel_check()
            self.lock.notify_all()
            return self._lost

    def lose(self, error: LeaseLost) -> None:
        """Declares the loss (once, and never after the holder finished) and runs the hook and
        the callbacks on this thread."""
        callbacks = self._mark_lost(error)
        if callbacks is None:
            return
        self._on_loss(error)
        for callback in callbacks:
            run_callback(callback, error)

    def on_lost(self, callback: LostCallback) -> None:
        with self.lock:
            error = self._lost
            if error is None:
                self._callbacks.append(callback)
                return
        run_callback(callback, error)

    def _mark_lost(self, error: LeaseLost) -> Optional[List[LostCallback]]:
        with self.lock:
            if self.over():
                return None
            self._lost = error
            self._cancel_check()
            callbacks, self._callbacks = self._callbacks, []
            self.lock.notify_all()
            return callbacks

    def _schedule_check(self) -> None:  # under self.lock
        self._cancel_check()
        self._check = self._clock.at(self._deadline - self._guard, self._check_deadline)

    def _cancel_check(self) -> None:  # under self.lock
        if self._check is not None:
            self._check.cancel()
            self._check = None

    def _check_deadline(self) -> None:
        """On the timer thread: lost when the guarded deadline came without a renewal."""
        with self.lock:
            if self.over():
                return
            due = self._deadline - self._guard
            if self._clock.now() < due:  # renewed meanwhile: check again then
                self._check = self._clock.at(due, self._check_deadline)
                return
            error = LeaseLost(grpc.StatusCode.DEADLINE_EXCEEDED,
                              f"{self._what} ran out: its local deadline came within "
                              f"{self._guard * 1000:.0f} ms without a renewal")
        self._dispatch(self.lose, error, self._what)


# --- the stream ------------------------------------------------------------------------------

#: A stream that lived this long (seconds) was not refused: its end starts a new count of
#: failures in a row.
_LIVED = 1.0


class Reopening:
    """What a kept stream does when one of its gRPC streams ends (rules 7 and 14): stop, because
    its holder asked or the status is final, or reopen after a backoff, until ``may_resume``
    says the guarded deadline has passed. The sync and the asyncio streams both ask it, so that
    they cannot come to differ on when a lease is lost."""

    def __init__(self, may_resume: Callable[[int], bool],
                 backoff: Callable[[int], float]) -> None:
        self._may_resume = may_resume
        self._backoff = backoff
        self._failures = 0

    def after(self, code: grpc.StatusCode, answered: bool, lived: float,
              asked: bool, pushback: Optional[float] = None,
              silent: bool = False) -> Tuple[Optional[float], Optional[bool]]:
        """``(delay, None)``: reopen after ``delay`` seconds. ``(None, resumable)``: the stream
        is over; ``resumable`` is what to tell its owner (False: a final status, True: resuming
        gave up), or None when the holder asked for the end and nothing is to be told.
        ``pushback``: the server's refusal (rule 17), which replaces the backoff; "do not retry"
        ends the stream like a final status. A pushback may outlast the guarded deadline: the
        lifetime's own timer reports the loss then, and cancels the wait. ``silent``: the client
        superseded the stream because no answer came within the silence bound: the new one
        goes at once (each silence took a bound of time already, so this cannot spin), and the
        failures go on counting, for the backoff of a later end of another kind."""
        if asked:
            return None, None
        if answered or (lived >= _LIVED and not silent):
            self._failures = 0
        if not silent and (code == grpc.StatusCode.OK or code in FINAL_CODES
                           or pushback == DO_NOT_RETRY):
            return None, False
        self._failures += 1
        if not self._may_resume(self._failures):
            return None, True
        if silent:
            return 0.0, None
        if pushback is not None:
            return jittered(pushback), None
        return self._backoff(self._failures), None


class SilenceWatch:
    """The silence rule's check for one kept stream, the sync and the asyncio one alike: a
    single pending timer at the moment the open stream would count as silent (``due()``, under
    ``lock``: None while nothing is outstanding, or no stream is open). When it fires early (an
    answer came, or the oldest unanswered request moved on) it arms itself again for the new
    moment; when the moment has come, it calls ``silenced()`` (outside the lock). So a stream
    costs one timer per renewal period at most."""

    def __init__(self, clock: Clock, lock: Any, due: Callable[[], Optional[float]],
                 silenced: Callable[[], None]) -> None:
        self._clock = clock
        self._lock = lock
        self._due = due
        self._silenced = silenced
        self._pending: Optional[Cancellable] = None

    def arm(self) -> None:
        """After a request went out (or a stream opened): check then, unless a check is due."""
        with self._lock:
            if self._pending is None:
                due = self._due()
                if due is not None:
                    self._pending = self._clock.at(due, self._fire)

    def disarm(self) -> None:
        with self._lock:
            if self._pending is not None:
                self._pending.cancel()
                self._pending = None

    def _fire(self) -> None:
        with self._lock:
            self._pending = None
            due = self._due()
            if due is None:
                return
            if self._clock.now() < due:
                self._pending = self._clock.at(due, self._fire)
                return
        self._silenced()


class LeftStreams:
    """The streams a kept stream left for their silence, for the sync and the asyncio streams
    alike: each still read until its end (a late answer counts), and cancelled once a later
    stream answered or the owner is done. Not locked: its stream calls it under its own lock
    (or on its event loop)."""

    def __init__(self, reopening: Reopening) -> None:
        self._reopening = reopening
        self._to_cancel: Dict[Any, Any] = {}  # call -> its request queue, not cancelled yet
        self._unended: Set[Any] = set()  # left, and their reader has not seen their end yet

    def leave(self, call: Any, control: Any, answered: bool) -> bool:
        """Whether ``call``, silent, is left for a new stream (False: past the guarded deadline,
        the lifetime reports the loss); if so it is noted."""
        delay, _ = self._reopening.after(grpc.StatusCode.UNAVAILABLE, answered, 0.0, False,
                                         silent=True)
        if delay is None:
            return False
        self._to_cancel[call] = control
        self._unended.add(call)
        return True

    def ended(self, call: Any) -> bool:
        """``call`` ended: whether it was a left one (its reader has nothing more to do)."""
        self._to_cancel.pop(call, None)
        if call in self._unended:
            self._unended.discard(call)
            return True
        return False

    def take(self) -> List[Tuple[Any, Any]]:
        """The left streams not cancelled yet, with their request queues: to cancel, each call
        first, then its queue told to stop (see KeptStream._drop_superseded)."""
        taken, self._to_cancel = list(self._to_cancel.items()), {}
        return taken


_HALF_CLOSE = "half-close"  # end the requests: the server gives the grant back and ends OK
_STOP = "stop"  # end the generator of a stream that is over or cancelled
_SEND = "send"  # send a request now (a change)
_PARK = "park"  # send nothing more, and end only at _STOP (a superseded stream: see KeptStream)


class Pending:
    """A change waiting for the request that carries it: its sequence and send time, once
    built."""

    __slots__ = ("on_sent", "floor", "sequence", "sent")

    def __init__(self, on_sent: Optional[Callable[[int, float], None]], floor: bool) -> None:
        self.on_sent = on_sent
        self.floor = floor
        self.sequence: Optional[int] = None
        self.sent: Optional[float] = None


class Sequencer:
    """A kept grant's request sequences, shared by the sync and the asyncio streams: the next
    sequence and its send time, the changes waiting for a request, the floor below which answers
    are not dated (the latest ttl change), and the highest sequence an answer echoed. Not
    locked: its stream calls it under its own lock (or on its event loop)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._sent = SentRequests()
        self.sequence = 0
        self._floor = 0  # answers echoing a lower sequence are dated None
        self.answered = 0  # the highest sequence an accepted answer echoed
        self.answers = 0
        self.pending: List[Pending] = []
        self._stream_first = 1  # the first sequence the current stream sent
        self._echoed = 0  # the highest sequence an answer on the current stream echoed

    def next(self, build: Callable[[int, bool], Any], first: bool) -> Any:
        """The next request, built by ``build(sequence, first)``; its send time recorded, and
        handed to the changes it carries."""
        self.sequence += 1
        sequence = self.sequence
        request = build(sequence, first)
        # Recorded before gRPC sends it: an earlier send time only makes a deadline safer.
        sent = self._clock.now()
        self._sent.record(sequence, sent)
        for pending in self.pending:
            pending.sequence, pending.sent = sequence, sent
            if pending.floor:
                self._floor = sequence
            if pending.on_sent is not None:
                pending.on_sent(sequence, sent)
        self.pending = []
        return request

    def new_stream(self) -> None:
        """A new stream is being opened: from now on only its own requests and answers count
        for its silence (none is outstanding before its first request is built)."""
        self._stream_first, self._echoed = self.sequence + 1, 0

    def date(self, sequence: int) -> Optional[float]:
        """The send time of the request an answer echoes, or None: unknown, too old, or sent
        before the latest ttl change (such an answer must not move a deadline)."""
        if sequence <= 0 or sequence < self._floor:
            return None
        return self._sent.sent_at(sequence)

    def accepted(self, sequence: int, sent: Optional[float]) -> None:
        if sent is not None and sequence > self.answered:
            self.answered = sequence
        if sequence > self._echoed:
            self._echoed = sequence
        self.answers += 1

    def silent_at(self, bound: float) -> Optional[float]:
        """When the current stream counts as silent: ``bound`` after the send time of its oldest
        request that no answer on it echoed (an answer echoing a sequence answers every earlier
        one: the server renews for the latest request it has), or None while none is
        outstanding."""
        oldest = max(self._stream_first, self._echoed + 1)
        if oldest > self.sequence:
            return None
        sent = self._sent.first_sent_from(oldest)
        return None if sent is None else sent + bound

    def has_answered(self, pending: Pending) -> bool:
        return pending.sequence is not None and self.answered >= pending.sequence


class _NotOpened:
    """Why a stream could not be opened."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = type(error).__name__


class KeptStream:
    """One kept grant's stream, reopened when it breaks, until its owner is done with it.

    The owner supplies:

    - ``open_call(requests, wait_for_ready=...)``: opens a stream (``stub.KeepAlive`` or
      ``stub.Campaign``); ``wait_for_ready`` while answers are to be expected (see
      ``silence()``): the stream then waits for a connection instead of failing;
    - ``build(sequence, first)``: the request with that sequence; ``first`` on a stream's
      first request (which names the grant: token, resume). Called under ``lock``;
    - ``period()``: seconds between periodic requests (ttl/4 of the current ttl);
    - ``on_answer(response, sent)``: each answer, with the send time of the request it
      echoes, or None when it echoes a sequence this stream cannot date or one sent before
      the latest ttl change (those must not move a deadline);
    - ``on_end(code, details, gave_up)``: once, when the stream ends for good without the
      owner asking: a final status (:data:`FINAL_CODES`), OK, or ``gave_up`` when
      ``may_resume()`` said no after a resumable end;
    - ``may_resume(failures)``: whether a broken stream is worth reopening now, after
      ``failures`` streams in a row that broke without an answer within a second of opening;
    - ``backoff(attempt)``: seconds to wait before reopening after failed attempt ``attempt``;
    - ``silence()``: the silence bound now (:func:`silence_bound` of the ttl), or None while no
      answers are to be expected (a candidate still waiting to lead).

    A stream whose oldest unanswered request has waited the silence bound is superseded: a new
    stream is opened at once, with the same first request, and the old one sends nothing more
    but is still read: a replica that was only slow (a cold JVM, a CPU starved by a neighbour)
    answers late, and its answer, dated by the send time of the request it echoes, counts as
    any other. The old one is cancelled (RST_STREAM only, never a half-close: its server
    releases nothing) once the new one answers, or when the owner is done with the grant. Each
    stream is read by a thread of its own, so a superseded one does not hold its successor up.
    Until it answers, the new stream is held to a third of the bound
    (:data:`REPLACEMENT_BOUND`): round_robin may have put it on the silent replica again.
    """

    def __init__(self, name: str, lock: "threading.Condition",
                 open_call: Callable[..., Any],
                 build: Callable[[int, bool], Any],
                 period: Callable[[], float],
                 on_answer: Callable[[Any, Optional[float]], None],
                 on_end: Callable[[grpc.StatusCode, str, bool], None],
                 may_resume: Callable[[int], bool],
                 backoff: Callable[[int], float],
                 clock: Clock = SYSTEM,
                 answered: Optional[Callable[[Any], None]] = None,
                 silence: Callable[[], Optional[float]] = lambda: None) -> None:
        self._name = name
        self._clock = clock
        self._silence = silence
        self._watch = SilenceWatch(clock, lock, self._silent_at, self._supersede)
        self._current_answered = False  # an answer came on the open stream
        self._replacing = False  # the open stream replaces a silent one
        self._answered_hook = answered
        self._lock = lock
        self._open_call = open_call
        self._build = build
        self._period = period
        self._on_answer = on_answer
        self._on_end = on_end
        self._may_resume = may_resume
        self._backoff = backoff
        self._seq = Sequencer(clock)
        self._control: Optional["queue.SimpleQueue[str]"] = None  # the open stream's, if any
        self._call: Any = None
        self._streams = 0
        self._closing = False  # the owner half-closed: give the grant back
        self._cancelled = False  # the owner left: stop without giving back
        self._wake = threading.Event()
        self._ending: Optional[Ending] = None
        self._ended = threading.Event()
        self._reopening = Reopening(may_resume, backoff)  # under self._lock
        self._left = LeftStreams(self._reopening)  # under self._lock

    def start(self) -> "KeptStream":
        """Opens the first stream on this thread (its first request goes out at once) and
        starts the thread that reads it, and reopens."""
        with self._lock:
            control: "queue.SimpleQueue[str]" = queue.SimpleQueue()
            self._control = control
        self._reader(control, self._open(control, False))
        return self

    def _reader(self, control: "queue.SimpleQueue[str]", call: Any) -> None:
        threading.Thread(target=self._run, args=(control, call), name=f"redlockd-kept {self._name}",
                         daemon=True).start()

    # --- what the owner reads ----------------------------------------------------------------

    @property
    def streams(self) -> int:
        """How many streams were opened so far (1 + the reopens)."""
        return self._streams

    @property
    def ending(self) -> Optional[Ending]:
        return self._ending

    @property
    def answers(self) -> int:
        """How many answers were handled so far."""
        return self._seq.answers

    def wait_answers(self, count: int, timeout: float) -> bool:
        """Waits until ``count`` answers were handled (or the stream ended); for tests."""
        with self._lock:
            return self._lock.wait_for(
                lambda: self._seq.answers >= count or self._ended.is_set(), timeout)

    # --- what the owner does -----------------------------------------------------------------

    def request_now(self, apply: Callable[[], None],
                    on_sent: Optional[Callable[[int, float], None]] = None,
                    floor: bool = False) -> Pending:
        """Applies a change to what ``build`` sends (``apply()``, under the lock, so that no
        request is built half-way) and sends a request carrying it at once, on the open stream
        or as the first request of the next one. ``on_sent(sequence, sent)`` runs under the
        lock when that request is built; with ``floor``, answers echoing an earlier sequence
        are ignored from then on. Wait with :meth:`wait_answered`."""
        pending = Pending(on_sent, floor)
        with self._lock:
            apply()
            self._seq.pending.append(pending)
            if self._control is not None:
                self._control.put(_SEND)
        return pending

    def wait_answered(self, pending: Pending, timeout: float,
                      stop: Callable[[], bool]) -> bool:
        """Waits until an accepted answer echoes ``pending``'s request or a later one (True),
        ``stop()`` holds, the stream ended for good, or ``timeout`` passed (False)."""
        with self._lock:
            return self._lock.wait_for(
                lambda: self._seq.has_answered(pending) or stop() or self._ended.is_set(),
                timeout) and self._seq.has_answered(pending)

    def half_close(self, timeout: Optional[float]) -> Optional[Ending]:
        """Ends the requests (the server gives the grant back and ends the stream OK) and waits
        for the end: its status, or None when it did not end within ``timeout``. If the stream
        is down, the next one sends its first request and half-closes at once."""
        self.half_close_async()
        if not self._ended.wait(timeout):
            return None
        return self._ending

    def half_close_async(self) -> None:
        with self._lock:
            if self._closing or self._cancelled:
                return
            self._closing = True
            if self._control is not None:
                self._control.put(_HALF_CLOSE)
        self._wake.set()
        self._drop_superseded()

    def cancel(self) -> None:
        """Leaves the stream without giving the grant back: it runs out at its validity."""
        with self._lock:
            self._cancelled = True
            call = self._call
            if self._control is not None:
                self._control.put(_STOP)
        self._wake.set()
        if call is not None:
            call.cancel()
        self._drop_superseded()

    def _drop_superseded(self) -> None:
        """Cancels the superseded streams: the cancel first, so that their request generators,
        told to stop only then, end a stream that is over (ending one that is not would be a
        half-close)."""
        with self._lock:
            left = self._left.take()
        for call, control in left:
            call.cancel()
            control.put(_STOP)

    def wait_end(self, timeout: Optional[float]) -> Optional[Ending]:
        if not self._ended.wait(timeout):
            return None
        return self._ending

    # --- the requests ------------------------------------------------------------------------

    def _next(self, first: bool) -> Any:
        with self._lock:
            request = self._seq.next(self._build, first)
            self._watch.arm()
            return request

    def _requests(self, control: "queue.SimpleQueue[str]", only_first: bool) -> Iterator[Any]:
        """One stream's requests: one at once, then one every period and one per change,
        until told to stop. ``only_first``: half-close right after the first (giving back a
        grant whose stream was down)."""
        yield self._next(first=True)
        if only_first:
            return
        due = time.monotonic() + self._period()
        while True:
            try:
                signal = control.get(timeout=max(0.0, due - time.monotonic()))
            except queue.Empty:
                # After a long pause of this process, one request now rather than a burst.
                due = max(due + self._period(), time.monotonic())
                yield self._next(first=False)
                continue
            if signal == _SEND:
                yield self._next(first=False)
                due = time.monotonic() + self._period()  # the period follows a changed ttl
                continue
            if signal == _PARK:
                while control.get() != _STOP:
                    pass
            return  # _HALF_CLOSE or _STOP

    # --- the answers and the end -------------------------------------------------------------

    def _accept(self, response: Any, call: Any) -> None:
        """An answer on ``call``: the open stream, or a superseded one (dated all the same)."""
        sequence = response.sequence
        with self._lock:
            sent = self._seq.date(sequence)
        self._on_answer(response, sent)
        with self._lock:
            self._seq.accepted(sequence, sent)
            current = call is self._call
            if current:
                self._current_answered = True
            self._lock.notify_all()
        if current:
            self._drop_superseded()  # the new stream works: the old ones are not needed
        if self._answered_hook is not None:
            self._answered_hook(response)

    # --- silence ---------------------------------------------------------------------------

    def _silent_at(self) -> Optional[float]:  # under self._lock
        if self._call is None or self._closing or self._cancelled:
            return None
        bound = bound_of(self._silence(), self._replacing, self._current_answered)
        return None if bound is None else self._seq.silent_at(bound)

    def _supersede(self) -> None:
        """The open stream is silent: it sends nothing more (but is still read), and a new one
        is opened at once, read by a new thread."""
        with self._lock:
            call, control = self._call, self._control
            if (call is None or control is None or self._closing or self._cancelled
                    or not self._left.leave(call, control, self._current_answered)):
                return
            control.put(_PARK)
            fresh: "queue.SimpleQueue[str]" = queue.SimpleQueue()
            self._control, self._call = fresh, None
            self._watch.disarm()
        _log.debug("%s: %s, reopening at once", self._name, silent_end(self._silence())[1])
        self._reader(fresh, self._open(fresh, False, replacing=True))

    def _run(self, control: "queue.SimpleQueue[str]", call: Any) -> None:
        """Reads ``call`` and, while it is the open stream, reopens after it ends; a superseded
        stream's reader only reads it to its end."""
        while True:
            opened = time.monotonic()
            code, details, answered, pushback = self._read(call)
            with self._lock:
                superseded = self._left.ended(call)
                if not superseded:
                    self._control = None
                    self._call = None
                    self._watch.disarm()
                    asked = self._closing or self._cancelled
            control.put(_STOP)  # wake the request generator so that gRPC's thread ends
            if superseded:
                return  # cancelled by _drop_superseded, or ended by its server: nothing to do
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
            self._wake.wait(delay)  # half-close and cancel cut it short
            with self._lock:
                if self._cancelled:
                    self._end_here((grpc.StatusCode.CANCELLED, "left by the holder"))
                    return
                control = queue.SimpleQueue()
                only_first = self._closing
                self._control = control
                self._wake.clear()
            call = self._open(control, only_first)

    def _open(self, control: "queue.SimpleQueue[str]", only_first: bool,
              replacing: bool = False) -> Any:
        """A new stream, or why it could not be opened (:class:`_NotOpened`); ``replacing``:
        for a silent one."""
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
        with self._lock:
            self._streams += 1
            self._call = call
            self._current_answered, self._replacing = False, replacing
            cancelled = self._cancelled
            self._watch.arm()  # the first request may have gone out before the call was known
        if cancelled:
            call.cancel()
        return call

    def _read(self, call: Any) -> Tuple[grpc.StatusCode, str, bool, Optional[float]]:
        """Reads ``call`` to its end: its status, whether it answered, and the server's
        pushback (rule 17), if its end carried one."""
        if isinstance(call, _NotOpened):  # (a call is an RpcError, hence an Exception, too)
            return grpc.StatusCode.UNAVAILABLE, f"cannot open a stream: {call.error}", False, None
        answered = False
        code, details, pushback = grpc.StatusCode.OK, "", None
        try:
            for response in call:
                answered = True
                self._accept(response, call)
        except grpc.RpcError as e:
            pushback = pushback_of(e)
            got = e.code()
            code = got if isinstance(got, grpc.StatusCode) else grpc.StatusCode.UNKNOWN
            details = e.details() or ""
        except Exception as e:  # a bug here must still end the stream, not hang its owner
            _log.exception("%s: reading the stream failed", self._name)
            call.cancel()
            code, details = grpc.StatusCode.UNKNOWN, type(e).__name__
        return code, details, answered, pushback

    def _end_here(self, ending: Ending) -> None:
        with self._lock:
            self._ending = ending
            self._ended.set()
            self._lock.notify_all()
