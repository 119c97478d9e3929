"""The client end of a KeepAlive stream.

The server counts a renewal's validity from when it finished; its answer may then spend any
time on the way (a congested link, a long pause in this process). So the deadline is counted
from the send time of the request whose sequence the answer echoes: that renewal began after
the request arrived, so the local deadline is never later than the server's. To keep that send
time recent, a request goes out every ttl/4; each renews at once, and the server's own ttl/3
timer, restarted by each renewal, then never fires first.

Threads: gRPC consumes the request generator on a thread of its own (the generator paces the
requests itself, so no timer is needed for them); a daemon thread per lease reads the answers.
"""
from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Iterator, Optional, Tuple

import grpc

from . import _durations
from ._proto import lock_pb2
from .errors import LeaseLost

if TYPE_CHECKING:  # pragma: no cover
    from ._proto.lock_pb2_grpc import LockServiceStub
    from .lease import Lease

_log = logging.getLogger("redlockd")

_HALF_CLOSE = "half-close"  # end the requests: the server releases the lease and ends OK
_STOP = "stop"  # end the generator of a stream that is over or cancelled

#: How many send times are kept. An answer echoes the sequence the server had when its renewal
#: began, normally one of the last two or three; one older than this is too old to matter.
_SENT_KEPT = 16

Ending = Tuple[grpc.StatusCode, str]


class _SentRequests:
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


class Keeper:
    """Keeps one lease alive on its own stream; tells the lease of renewals and of the end."""

    def __init__(self, lease: "Lease", stub: "LockServiceStub", token: str, ttl: float) -> None:
        self._lease = lease
        self._resource = lease.resource
        self._period = max(ttl / 4, 0.001)
        self._named = lock_pb2.KeepAliveRequest(
            resource=lease.resource, token=token, ttl=_durations.to_proto(ttl))
        self._sent = _SentRequests()
        self._control: "queue.SimpleQueue[str]" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closing = False
        self._ending: Optional[Ending] = None
        self._ended = threading.Event()
        self._answered = threading.Condition()
        self._answers = 0
        self._call = stub.KeepAlive(self._requests())
        self._reader = threading.Thread(
            target=self._read, name=f"redlockd-keepalive {self._resource}", daemon=True)
        self._reader.start()

    def _requests(self) -> Iterator[lock_pb2.KeepAliveRequest]:
        """The stream's requests: one at once, then one every ttl/4, until told to stop."""
        sequence = 0
        due = time.monotonic()
        while True:
            sequence += 1
            request = lock_pb2.KeepAliveRequest()
            request.CopyFrom(self._named)
            request.sequence = sequence
            # Recorded before gRPC sends it: an earlier send time only makes the deadline safer.
            self._sent.record(sequence, time.monotonic())
            yield request
            due += self._period
            try:
                signal = self._control.get(timeout=max(0.0, due - time.monotonic()))
            except queue.Empty:
                continue
            if signal in (_HALF_CLOSE, _STOP):
                return

    def _read(self) -> None:
        code, details = grpc.StatusCode.OK, ""
        try:
            for response in self._call:
                self._answer(response)
        except grpc.RpcError as e:
            code = e.code() if isinstance(e.code(), grpc.StatusCode) else grpc.StatusCode.UNKNOWN
            details = e.details() or ""
        except Exception as e:  # a bug here must still end the lease, not hang it
            _log.exception("KeepAlive reader of resource '%s' failed", self._resource)
            code, details = grpc.StatusCode.UNKNOWN, type(e).__name__
        self._control.put(_STOP)  # wake the request generator so that gRPC's thread ends
        with self._lock:
            self._ending = (code, details)
            closing = self._closing
        self._ended.set()
        with self._answered:
            self._answered.notify_all()
        if closing:
            return
        if code == grpc.StatusCode.OK:
            error = LeaseLost(grpc.StatusCode.UNAVAILABLE,
                              f"the KeepAlive stream of resource '{self._resource}' ended unexpectedly")
        else:
            error = LeaseLost(code, details or
                              f"the KeepAlive stream of resource '{self._resource}' ended {code.name}")
        self._lease._lose(error)

    def _answer(self, response: lock_pb2.KeepAliveResponse) -> None:
        sent = self._sent.sent_at(response.sequence) if response.sequence > 0 else None
        if sent is not None:  # an answer this client cannot date does not move the deadline
            self._lease._advance(sent + _durations.from_proto(response.lease.validity))
        with self._answered:
            self._answers += 1
            self._answered.notify_all()

    def wait_answers(self, count: int, timeout: float) -> bool:
        """Waits until ``count`` answers were handled (or the stream ended); for tests."""
        with self._answered:
            return self._answered.wait_for(
                lambda: self._answers >= count or self._ended.is_set(), timeout)

    def half_close(self, timeout: float) -> Optional[Ending]:
        """Ends the requests (the server releases the lease and ends the stream) and waits for
        the stream's end: its status, or None when it did not end within ``timeout``."""
        with self._lock:
            self._closing = True
        self._control.put(_HALF_CLOSE)
        if not self._ended.wait(timeout):
            return None
        return self._ending

    def cancel(self) -> None:
        """Stops the renewals without releasing: the lease runs out at its validity."""
        with self._lock:
            self._closing = True
        self._call.cancel()
        self._control.put(_STOP)
