"""The rules of a kept grant's stream, without I/O: KeepAlive for a kept lease, Campaign for a
candidacy and the leadership it wins; the sync client and redlockd.aio alike.

:class:`KeptCore` takes events and returns actions, as h11 and h2 do. Events: the owner starts
the grant's stream, sends a change, half-closes or leaves it; a stream opened, answered or
ended; a timer came. Actions: open a stream with its first request, send a request on it, end
its requests (a half-close while its call lives), cancel it (RST_STREAM only, never a
half-close), call the owner back outside the lock, notify the waiters, and start a timer. The
rules it keeps:

- **Sequences and dating** (rule 6): a request at once, then one every period (ttl/4) and one
  per change, each with a rising sequence, across streams too; an answer is dated by the send
  time of the request whose sequence it echoes (:class:`Sequencer`).
- **Reopening** (rules 7, 14, 17): a stream that ends with a status that does not say the grant
  is gone is reopened with the same first request after a backoff with jitter, or the server's
  pushback, while the owner says it is worth it (:class:`Reopening`).
- **Silence** (issue 40): a stream whose oldest unanswered request has waited the silence bound
  is superseded: a new one opens at once, and the old one sends nothing more but is still read
  (a late answer counts), and is cancelled once a later stream answered or the owner is done.

Why the send time: the server counts a renewal's validity from when it finished; its answer may
then spend any time on the way (a congested link, a long pause in this process). The renewal
began after the request arrived, so the local deadline is never later than the server's. To
keep that send time recent, a request goes out every ttl/4; each renews at once, and the
server's own ttl/3 timer, restarted by each renewal, then never fires first.

:class:`KeptStreams` carries the actions out; a flavour supplies only how a request reaches a
stream, how a stream is read (a thread or a task) and its timers: ``ThreadStreams`` in
``redlockd/_threads.py``, ``TaskStreams`` in ``redlockd/aio/_tasks.py``. Two clocks: the grant's
(``time.monotonic()``, or a test's clock moved by hand) dates requests and answers and times the
silence; real time paces the requests and the reopen backoff, as it did before this core.
"""
from __future__ import annotations

import collections
import functools
import itertools
import logging
import threading
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import grpc

from ._clock import Clock
from ._ops import Ended, Procedure, Read, Wait
from ._pushback import DO_NOT_RETRY, jittered

_log = logging.getLogger("redlockd")

#: How many send times are kept. An answer echoes the sequence the server had when its renewal
#: began, normally one of the last two or three; one older than this is too old to matter.
_SENT_KEPT = 16

#: Statuses that end a kept stream for good: the grant is gone (NOT_FOUND) or the server will
#: not have it renewed by this caller whatever replica it asks. Anything else is resumed (OK
#: unasked is a loss too, see Reopening).
FINAL_CODES = frozenset({
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.INVALID_ARGUMENT,
})

Ending = Tuple[grpc.StatusCode, str]


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


def bound_of(bound: Optional[float], replacing: bool, answered: bool,
             slowest: float = 0.0) -> Optional[float]:
    """The silence bound of the open stream: ``bound`` (None: no answers to expect), or a part of
    it (:data:`REPLACEMENT_BOUND`) for a stream ``replacing`` a silent one that has not
    ``answered`` yet; never less than twice the grant's ``slowest`` recent answer
    (:class:`SlowestAnswer`), up to twice ``bound``. A replica that is slow, not silent, must not
    be taken for a silent one: each stream opened is one more renewal on the replicas (the
    superseded ones are renewed until they end), so with hundreds of grants a burst of late
    answers (a replica just restarted, a loaded host) became thousands of new streams a second,
    which made every answer later still, until none came before its deadline (issue 40). A
    silent replica answers nothing and leaves the bound as it was. ``slowest`` is the larger of
    the grant's own and its client's (:class:`KeptCore`'s ``shared``)."""
    if bound is None:
        return None
    base = bound if not replacing or answered else bound * REPLACEMENT_BOUND
    return max(base, min(2 * slowest, 2 * bound))


class SlowestAnswer:
    """The slowest recent answer of one kept grant's streams, or of all of a client's (from the
    send of a request to the answer that echoes it), faded by half every ttl (four periods), so
    that a replica slow for a while and fast again is soon held to the usual bound. An answer
    later than the ttl is left out: its replica was stopped (a frozen host that woke up), not
    slow, and what it would teach is to wait for a silent replica. Thread-safe: the sync
    client's grants share one from their own threads."""

    __slots__ = ("_slowest", "_at", "_lock")

    def __init__(self) -> None:
        self._slowest = 0.0
        self._at = 0.0
        self._lock = threading.Lock()

    def answered(self, latency: float, now: float, period: float) -> None:
        """An answer came ``latency`` seconds after its request was sent, at ``now``."""
        if latency > 4 * period:
            return
        with self._lock:
            if latency >= self._faded(now, period):
                self._slowest, self._at = latency, now

    def seconds(self, now: float, period: float) -> float:
        """The slowest recent answer's time, faded by half for every ttl since it came."""
        with self._lock:
            return self._faded(now, period)

    def _faded(self, now: float, period: float) -> float:
        if self._slowest == 0.0:
            return 0.0
        faded: float = self._slowest * 0.5 ** ((now - self._at) / (4 * period))
        return faded


def silent_end(bound: Optional[float]) -> str:
    """What a stream left for its silence says (in the log): its replica did not answer within
    ``bound``."""
    within = "" if bound is None else f" within {bound * 1000:.0f} ms"
    return f"no answer{within}: the stream was silent"


# --- sequences -------------------------------------------------------------------------------


class Pending:
    """A change waiting for the request that carries it: its sequence and send time, once
    built. ``on_sent(sequence, sent)`` runs when that request is built; with ``floor``, answers
    echoing an earlier sequence are not dated from then on (a ttl change, rule 15)."""

    __slots__ = ("on_sent", "floor", "sequence", "sent")

    def __init__(self, on_sent: Optional[Callable[[int, float], None]], floor: bool) -> None:
        self.on_sent = on_sent
        self.floor = floor
        self.sequence: Optional[int] = None
        self.sent: Optional[float] = None


class Sequencer:
    """A kept grant's request sequences: the next sequence and its send time, the changes
    waiting for a request, the floor below which answers are not dated (the latest ttl change),
    and the highest sequence an answer echoed. Not locked: its core is called under its
    grant's lock (or on its event loop)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._sent: "collections.OrderedDict[int, float]" = collections.OrderedDict()
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
        self._sent[sequence] = sent
        while len(self._sent) > _SENT_KEPT:
            self._sent.popitem(last=False)
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
        return self._sent.get(sequence)

    def sent_at(self, sequence: int) -> Optional[float]:
        """The send time of the request with this sequence, if still kept, whatever the floor."""
        return self._sent.get(sequence)

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
        outstanding. A request too old to be kept was sent earlier still: the oldest kept after
        it stands in (a later time only delays a silence by a period)."""
        oldest = max(self._stream_first, self._echoed + 1)
        if oldest > self.sequence:
            return None
        sent = next((at for kept, at in self._sent.items() if kept >= oldest), None)
        return None if sent is None else sent + bound

    def has_answered(self, pending: Pending) -> bool:
        return pending.sequence is not None and self.answered >= pending.sequence


# --- reopening -------------------------------------------------------------------------------

#: A stream that lived this long (seconds) was not refused: its end starts a new count of
#: failures in a row.
_LIVED = 1.0


class Reopening:
    """What a kept stream does when one of its gRPC streams ends (rules 7, 14 and 17): stop,
    because its holder asked or the status is final, or reopen after a backoff, until
    ``may_resume(failures)`` says the guarded deadline has passed."""

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


# --- actions ---------------------------------------------------------------------------------


class Open(NamedTuple):
    """Open stream ``sid`` with ``first`` as its first request (and half-close right after it,
    with ``half_close``); ``wait_for_ready``: wait for a connection instead of failing while no
    replica is up (a grant that exists: it starts the moment one is, backoff or not)."""

    sid: int
    first: Any
    half_close: bool
    wait_for_ready: bool


class Send(NamedTuple):
    sid: int
    request: Any


class Finish(NamedTuple):
    """End stream ``sid``'s requests: a half-close (the server gives the grant back and ends the
    stream OK)."""

    sid: int


class Cancel(NamedTuple):
    """Cancel stream ``sid`` (RST_STREAM), then end its requests: never a half-close."""

    sid: int


class At(NamedTuple):
    """Call ``event(*args)`` (an event of the core) when the grant's clock reaches ``when``."""

    when: float
    event: Callable[..., "Actions"]
    args: Tuple[Any, ...]


class After(NamedTuple):
    """Call ``event(*args)`` after ``delay`` seconds of real time."""

    delay: float
    event: Callable[..., "Actions"]
    args: Tuple[Any, ...]


class Later(NamedTuple):
    """Call ``fn(*args)`` outside the grant's lock (the owner's callbacks)."""

    fn: Callable[..., Any]
    args: Tuple[Any, ...]


class Notify(NamedTuple):
    """Wake whoever waits on the grant's state."""


NOTIFY = Notify()

Action = Union[Open, Send, Finish, Cancel, At, After, Later, Notify]
Actions = List[Action]


class _Stream:
    """One gRPC stream of a kept grant, as the core sees it."""

    __slots__ = ("sid", "replacing", "answered", "cancelled", "pace")

    def __init__(self, sid: int, replacing: bool) -> None:
        self.sid = sid
        self.replacing = replacing  # opened for a silent one
        self.answered = False  # an answer came on it
        self.cancelled = False
        self.pace = 0  # the generation of its pending periodic request


# --- the core --------------------------------------------------------------------------------


class KeptCore:
    """One kept grant's stream, reopened when it breaks, or superseded when it is silent, until
    its owner is done with it. Every method is an event: call it under the grant's lock (or on
    its event loop) and carry out the actions it returns, in order.

    The owner supplies its rules, called under the lock (no I/O, no callbacks of the user):

    - ``build(sequence, first)``: the request with that sequence; ``first`` on a stream's
      first request (which names the grant: token, resume);
    - ``period()``: seconds between periodic requests (ttl/4 of the current ttl);
    - ``on_answer(response, sent)``: each answer, with the send time of the request it
      echoes, or None when it cannot be dated (unknown, too old, or sent before the latest ttl
      change: those must not move a deadline);
    - ``may_resume(failures)``: whether a broken stream is worth reopening now, after
      ``failures`` streams in a row that broke without an answer within a second of opening;
    - ``backoff(attempt)``: seconds to wait before reopening after failed attempt ``attempt``;
    - ``silence()``: the silence bound now (:func:`silence_bound` of the ttl), or None while no
      answers are to be expected (a candidate still waiting to lead);

    and, called outside the lock: ``on_end(code, details, gave_up)``, once, when the stream ends
    for good without the owner asking (a final status, OK, or ``gave_up`` when ``may_resume``
    said no); ``answered(response)``, the test-only hook, after each answer was processed.

    ``shared``: the slowest recent answer of every kept grant of the client, which the silence
    bound follows as it follows the grant's own. A stream that just moved (its replica shut
    down) has no answer of its own yet, and its first one is late when hundreds of streams
    moved with it to replicas that are busy starting: the other grants' answers say so. Only
    answers on a grant's open stream count there: a late answer on a stream left for its
    silence is a replica that stopped and woke (a frozen host), which says nothing of the
    others, and the other grants must still leave a silent replica within the bound. A silent
    replica leaves it as it was (it answers nothing), and the replicas still answering keep it
    short.
    """

    def __init__(self, name: str, clock: Clock,
                 build: Callable[[int, bool], Any],
                 period: Callable[[], float],
                 on_answer: Callable[[Any, Optional[float]], None],
                 on_end: Callable[[grpc.StatusCode, str, bool], None],
                 may_resume: Callable[[int], bool],
                 backoff: Callable[[int], float],
                 silence: Callable[[], Optional[float]] = lambda: None,
                 answered: Optional[Callable[[Any], None]] = None,
                 shared: Optional[SlowestAnswer] = None) -> None:
        self.name = name
        self._clock = clock
        self._build = build
        self._period = period
        self._on_answer = on_answer
        self._on_end = on_end
        self._silence = silence
        self._answered = answered
        self._seq = Sequencer(clock)
        self._slowest = SlowestAnswer()
        self._shared = SlowestAnswer() if shared is None else shared
        self._reopening = Reopening(may_resume, backoff)
        self._ids = itertools.count(1)
        self._generations = itertools.count(1)
        self._current: Optional[_Stream] = None  # the stream requests go to
        self._left: Dict[int, _Stream] = {}  # superseded for their silence, still read
        self._closing = False  # the owner half-closed: give the grant back
        self._cancelled = False  # the owner left: stop without giving back
        self._reopen = 0  # the generation of the pending reopen, 0 when none is pending
        self._silence_check = 0  # the generation of the pending silence check, 0: none
        self.streams = 0  # how many streams were opened so far (1 + the reopens)
        self.ending: Optional[Ending] = None

    # --- what the owner reads ----------------------------------------------------------------

    @property
    def over(self) -> bool:
        """The stream ended for good."""
        return self.ending is not None

    @property
    def answers(self) -> int:
        """How many answers were handled so far."""
        return self._seq.answers

    def has_answered(self, pending: Pending) -> bool:
        """Whether an accepted answer echoed ``pending``'s request or a later one."""
        return self._seq.has_answered(pending)

    # --- the owner's events ------------------------------------------------------------------

    def start(self) -> Actions:
        """Opens the first stream: its first request goes out at once."""
        return self._open(replacing=False)

    def request_now(self, apply: Callable[[], None], pending: Pending) -> Actions:
        """Applies a change to what ``build`` sends (``apply()``, here, so that no request is
        built half-way) and sends a request carrying it at once, on the open stream or as the
        first request of the next one."""
        apply()
        self._seq.pending.append(pending)
        stream = self._current
        if stream is None or self._closing or self._cancelled:
            return []
        return self._send(stream)

    def half_close(self) -> Actions:
        """Ends the requests: the server gives the grant back and ends the stream OK. If the
        stream is down, the next one sends its first request and half-closes at once."""
        if self._closing or self._cancelled:
            return []
        self._closing = True
        actions = self._drop_left()
        if self._current is not None:
            actions.append(Finish(self._current.sid))
        elif self._reopen:
            self._reopen = 0
            actions += self._open(replacing=False)
        return actions

    def cancel(self) -> Actions:
        """Leaves the stream without giving the grant back: it runs out at its validity."""
        if self._cancelled:
            return []
        self._cancelled = True
        actions = self._drop_left()
        if self._current is not None:
            self._current.cancelled = True
            actions.append(Cancel(self._current.sid))
        elif self._reopen:
            self._reopen = 0
            actions += self._end(grpc.StatusCode.CANCELLED, "left by the holder")
        return actions + [NOTIFY]

    # --- the streams' events -----------------------------------------------------------------

    def opened(self, sid: int) -> Actions:
        """Stream ``sid`` is open (its first request may have gone out already)."""
        self.streams += 1
        return self._arm_silence()

    def answer(self, sid: int, response: Any) -> Actions:
        """An answer on stream ``sid``: the open one, or a superseded one (dated all the same)."""
        stream = self._current if self._current is not None and self._current.sid == sid \
            else self._left.get(sid)
        sent = self._seq.date(response.sequence)
        echoed = self._seq.sent_at(response.sequence)
        # Only while answers are due: a candidate's first answer comes when it leads, not late.
        if echoed is not None and self._silence() is not None:
            now = self._clock.now()
            self._slowest.answered(now - echoed, now, self._period())
            if stream is not None and stream is self._current:
                self._shared.answered(now - echoed, now, self._period())
        self._on_answer(response, sent)
        self._seq.accepted(response.sequence, sent)
        actions: Actions = [NOTIFY]
        if stream is not None:
            stream.answered = True
            if stream is self._current:
                actions += self._drop_left()  # the new stream works: the old ones are not needed
        actions += self._arm_silence()
        if self._answered is not None:
            actions.append(Later(self._answered, (response,)))
        return actions

    def ended(self, sid: int, end: Ended, lived: float) -> Actions:
        """Stream ``sid`` ended with ``end``, having lived ``lived`` seconds (real time)."""
        if self._left.pop(sid, None) is not None:
            return []  # cancelled once a later stream answered, or ended by its server
        stream = self._current
        if stream is None or stream.sid != sid:
            return []
        self._current = None
        self._silence_check = 0
        asked = self._closing or self._cancelled
        delay, resumable = self._reopening.after(end.code, stream.answered, lived, asked,
                                                 end.pushback)
        if delay is None:
            actions = self._end(end.code, end.details)
            if resumable is not None:
                actions.append(Later(self._on_end, (end.code, end.details, resumable)))
            return actions
        _log.debug("%s: stream ended %s (%s), reopening in %.0f ms", self.name, end.code.name,
                   end.details, delay * 1000)
        self._reopen = next(self._generations)
        return [After(delay, self.reopen_due, (self._reopen,))]

    # --- the timers' events ------------------------------------------------------------------

    def paced(self, sid: int, generation: int) -> Actions:
        """A period passed since stream ``sid`` sent its latest request."""
        stream = self._current
        if (stream is None or stream.sid != sid or stream.pace != generation or self._closing
                or self._cancelled):
            return []
        return self._send(stream)

    def reopen_due(self, generation: int) -> Actions:
        """The backoff before a reopen passed (unless the owner cut it short meanwhile)."""
        if generation != self._reopen:
            return []
        self._reopen = 0
        return self._open(replacing=False)

    def silence_due(self, generation: int) -> Actions:
        """The silence check came: the open stream is silent, or the moment moved on (an answer
        came, the oldest unanswered request changed): then check again at the new one."""
        if generation != self._silence_check:
            return []
        self._silence_check = 0
        due = self._silent_at()
        if due is None:
            return []
        if self._clock.now() < due:
            return self._arm_silence()
        return self._supersede()

    # --- the rules ---------------------------------------------------------------------------

    def _open(self, replacing: bool) -> Actions:
        self._seq.new_stream()
        stream = _Stream(next(self._ids), replacing)
        self._current = stream
        first = self._seq.next(self._build, first=True)
        actions: Actions = [Open(stream.sid, first, self._closing, self._silence() is not None)]
        if not self._closing:
            actions.append(self._pace(stream))
        return actions

    def _send(self, stream: _Stream) -> Actions:
        request = self._seq.next(self._build, first=False)
        # The period follows a changed ttl, counted from this request.
        actions: Actions = [Send(stream.sid, request), self._pace(stream)]
        return actions + self._arm_silence()

    def _pace(self, stream: _Stream) -> After:
        stream.pace = next(self._generations)
        return After(max(self._period(), 0.001), self.paced, (stream.sid, stream.pace))

    def _end(self, code: grpc.StatusCode, details: str) -> Actions:
        self.ending = (code, details)
        return [NOTIFY]

    def _drop_left(self) -> Actions:
        """Cancels the superseded streams not cancelled yet (each is forgotten when its end is
        read)."""
        actions: Actions = []
        for stream in self._left.values():
            if not stream.cancelled:
                stream.cancelled = True
                actions.append(Cancel(stream.sid))
        return actions

    def _silent_at(self) -> Optional[float]:
        stream = self._current
        if stream is None or self._closing or self._cancelled:
            return None
        now, period = self._clock.now(), self._period()
        slowest = max(self._slowest.seconds(now, period), self._shared.seconds(now, period))
        bound = bound_of(self._silence(), stream.replacing, stream.answered, slowest)
        return None if bound is None else self._seq.silent_at(bound)

    def _arm_silence(self) -> Actions:
        """One pending silence check at a time: it arms itself again when it comes early."""
        if self._silence_check:
            return []
        due = self._silent_at()
        if due is None:
            return []
        self._silence_check = next(self._generations)
        return [At(due, self.silence_due, (self._silence_check,))]

    def _supersede(self) -> Actions:
        """The open stream is silent: it sends nothing more (but is still read), and a new one
        is opened at once, with the same first request."""
        stream = self._current
        if stream is None:
            return []
        delay, _ = self._reopening.after(grpc.StatusCode.UNAVAILABLE, stream.answered, 0.0, False,
                                         silent=True)
        if delay is None:
            return []  # past the guarded deadline: the lifetime reports the loss
        _log.debug("%s: %s, reopening at once", self.name, silent_end(self._silence()))
        self._left[stream.sid] = stream
        self._current = None
        return self._open(replacing=True)


# --- carrying the actions out ----------------------------------------------------------------

#: Ends a stream's request iterator: a half-close while the call lives, nothing once it is over.
END = object()

Deferred = List[Tuple[Callable[..., Any], Tuple[Any, ...]]]


class KeptStreams:
    """Carries out one kept grant's actions (see :class:`KeptCore`), for a flavour that
    supplies its request queues, how it reads a stream (a thread, or a task), real time and how
    it runs the owner's callbacks that a timer brought about. Everything else is here once:
    which call an action is for, the order of a cancel (the call first, then its requests, so
    that their end is no half-close), and the owner's waits, as procedures.

    ``open_call(requests, wait_for_ready=...)`` opens a stream (``stub.KeepAlive`` or
    ``stub.Campaign``); ``lock`` is the grant's, ``waiter`` is notified under it after every
    change (a ``threading.Condition``, or ``aio._tasks.Signal``), ``clock`` is the grant's
    clock and ``realtime`` a clock on ``time.monotonic()`` whose timers pace the requests.
    """

    def __init__(self, core: KeptCore, lock: Any, waiter: Any, open_call: Callable[..., Any],
                 clock: Clock, realtime: Clock) -> None:
        self._core = core
        self._lock = lock
        self._waiter = waiter
        self._open_call = open_call
        self._clock = clock
        self._realtime = realtime
        self._calls: Dict[int, Tuple[Any, Any]] = {}  # sid -> (call, its request queue) until read to its end

    # --- the flavour's part ------------------------------------------------------------------

    def _inbox(self) -> Any:
        """A new request queue."""
        raise NotImplementedError

    def _put(self, inbox: Any, item: Any) -> None:
        raise NotImplementedError

    def _requests(self, inbox: Any) -> Any:
        """The requests of ``inbox`` as the flavour's gRPC consumes them, until :data:`END`."""
        raise NotImplementedError

    def _spawn(self, procedure: Procedure[None]) -> None:
        """Runs ``procedure`` (a stream's reading) on a thread or a task of its own."""
        raise NotImplementedError

    def _run_later(self, later: Deferred) -> None:
        """Runs callbacks a timer brought about (not on the shared timer thread)."""
        raise NotImplementedError

    # --- what the owner does -----------------------------------------------------------------

    def start(self) -> "KeptStreams":
        """Opens the first stream now (its first request goes out at once)."""
        self.event(self._core.start)
        return self

    def request(self, apply: Callable[[], None],
                on_sent: Optional[Callable[[int, float], None]] = None,
                floor: bool = False) -> Pending:
        """Sends a request carrying ``apply()``'s change at once (see KeptCore.request_now)."""
        pending = Pending(on_sent, floor)
        self.event(self._core.request_now, apply, pending)
        return pending

    def half_close_now(self) -> None:
        self.event(self._core.half_close)

    def cancel(self) -> None:
        """Leaves the stream without giving the grant back: it runs out at its validity."""
        self.event(self._core.cancel)

    @property
    def streams(self) -> int:
        """How many streams were opened so far (1 + the reopens)."""
        return self._core.streams

    @property
    def answers(self) -> int:
        return self._core.answers

    @property
    def ending(self) -> Optional[Ending]:
        return self._core.ending

    def half_close(self, timeout: Optional[float]) -> Procedure[Optional[Ending]]:
        """Half-closes and waits for the end: its status, or None when it did not end within
        ``timeout``."""
        self.half_close_now()
        ending: Optional[Ending] = yield from self.ended_within(timeout)
        return ending

    def ended_within(self, timeout: Optional[float]) -> Procedure[Optional[Ending]]:
        if (yield Wait(self._waiter, lambda: self._core.over, timeout)):
            return self._core.ending
        return None

    def answered(self, pending: Pending, timeout: float,
                 stop: Callable[[], bool]) -> Procedure[bool]:
        """Waits until an accepted answer echoes ``pending``'s request or a later one (True),
        ``stop()`` holds, the stream ended for good, or ``timeout`` passed (False)."""
        yield Wait(self._waiter, lambda: (self._core.has_answered(pending) or stop()
                                          or self._core.over), timeout)
        return self._core.has_answered(pending)

    # --- events ------------------------------------------------------------------------------

    def event(self, handler: Callable[..., Actions], *args: Any) -> None:
        """Runs ``handler(*args)`` (an event of the core) under the lock, carries its actions
        out, then runs the callbacks it brought about on this thread."""
        for fn, fn_args in self._locked(handler, args):
            fn(*fn_args)

    def _timer(self, handler: Callable[..., Actions], args: Tuple[Any, ...]) -> None:
        later = self._locked(handler, args)
        if later:
            self._run_later(later)

    def _locked(self, handler: Callable[..., Actions], args: Tuple[Any, ...]) -> Deferred:
        with self._lock:
            return self._execute(handler(*args))

    def _execute(self, actions: Actions) -> Deferred:  # under the lock
        later: Deferred = []
        for action in actions:
            if isinstance(action, Send):
                self._to(action.sid, action.request)
            elif isinstance(action, Open):
                later += self._open(action)
            elif isinstance(action, After):
                self._realtime.at(self._realtime.now() + action.delay,
                                  functools.partial(self._timer, action.event, action.args))
            elif isinstance(action, At):
                self._clock.at(action.when, functools.partial(self._timer, action.event, action.args))
            elif isinstance(action, Later):
                later.append((action.fn, action.args))
            elif isinstance(action, Finish):
                self._to(action.sid, END)
            elif isinstance(action, Cancel):
                self._cancel(action.sid)
            else:
                self._waiter.notify_all()
        return later

    def _open(self, action: Open) -> Deferred:
        inbox = self._inbox()
        self._put(inbox, action.first)
        if action.half_close:
            self._put(inbox, END)
        try:
            call = self._open_call(self._requests(inbox), wait_for_ready=action.wait_for_ready)
        except Exception as e:  # e.g. the channel was closed under it
            _log.debug("%s: cannot open a stream: %s", self._core.name, e)
            end = Ended(grpc.StatusCode.UNAVAILABLE, f"cannot open a stream: {type(e).__name__}")
            return self._execute(self._core.ended(action.sid, end, 0.0))
        self._calls[action.sid] = (call, inbox)
        self._spawn(self._reading(action.sid, call))
        return self._execute(self._core.opened(action.sid))

    def _to(self, sid: int, item: Any) -> None:
        entry = self._calls.get(sid)
        if entry is not None:
            self._put(entry[1], item)

    def _cancel(self, sid: int) -> None:
        entry = self._calls.get(sid)
        if entry is not None:
            entry[0].cancel()
            self._put(entry[1], END)  # told to end only now: the call is over, no half-close

    def _reading(self, sid: int, call: Any) -> Procedure[None]:
        """Reads stream ``sid`` to its end, each answer and the end an event of the core."""
        started = self._realtime.now()
        while True:
            message = yield Read(call)
            if isinstance(message, Ended):
                break
            try:
                self.event(self._core.answer, sid, message)
            except Exception as e:  # a bug here must still end the stream, not hang its owner
                _log.exception("%s: reading the stream failed", self._core.name)
                call.cancel()
                message = Ended(grpc.StatusCode.UNKNOWN, type(e).__name__)
                break
        self.event(self._ended, sid, message, self._realtime.now() - started)

    def _ended(self, sid: int, end: Ended, lived: float) -> Actions:  # under the lock
        entry = self._calls.pop(sid, None)
        if entry is not None:
            self._put(entry[1], END)  # the call is over: its requests' end sends nothing
        return self._core.ended(sid, end, lived)


def requests_of(get: Callable[[], Any]) -> Iterator[Any]:
    """The requests ``get()`` hands out, until :data:`END` (the sync flavour's iterator)."""
    while True:
        item = get()
        if item is END:
            return
        yield item
