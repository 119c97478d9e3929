"""The client end of a Campaign stream: the requests and the reading of the answers.

It works as the KeepAlive keeper does (see _keeper.py): a request at once, then one every
ttl/4 with a rising sequence, from the moment the stream opens (while the candidate waits
too, so that the answer that makes it leader echoes a recent sequence), and each answer dated
by the send time of the request whose sequence it echoes. A request may also carry a new value
(a proclaim); every later request carries that value too, since each request names the
candidacy's value.

What the answers and the end mean is decided by the owner (``_Candidacy`` in election.py),
which gets ``on_answer(response, sent_at_or_None)`` and then, once, ``on_end(code, details)``
on the reader thread.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Callable, Iterator, Optional, Tuple, Union

import grpc

from . import _durations
from ._keeper import _SentRequests
from ._proto import election_pb2

_log = logging.getLogger("redlockd")

_HALF_CLOSE = "half-close"  # end the requests: the server resigns (or withdraws) and ends OK
_STOP = "stop"  # end the generator of a stream that is over or cancelled


class _Value:
    """A control message: send a request with this value now (a proclaim)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


Ending = Tuple[grpc.StatusCode, str]
AnswerHandler = Callable[[election_pb2.CampaignResponse, Optional[float]], None]
EndHandler = Callable[[grpc.StatusCode, str], None]


class CampaignStream:
    """One Campaign stream, open from :meth:`start` until the server ends it."""

    def __init__(self, stub, election: str, value: str, ttl: float,
                 on_answer: AnswerHandler, on_end: EndHandler) -> None:
        self._election = election
        self._value = value
        self._ttl = _durations.to_proto(ttl)
        self._period = max(ttl / 4, 0.001)
        self._on_answer = on_answer
        self._on_end = on_end
        self._sent = _SentRequests()
        self._control: "queue.SimpleQueue[Union[str, _Value]]" = queue.SimpleQueue()
        self._ending: Optional[Ending] = None
        self._ended = threading.Event()
        self._stub = stub
        self._call = None

    def start(self) -> "CampaignStream":
        """Opens the stream (the first request goes out at once) and starts reading it."""
        self._call = self._stub.Campaign(self._requests())
        threading.Thread(target=self._read, name=f"redlockd-campaign {self._election}",
                         daemon=True).start()
        return self

    def _request(self, sequence: int) -> election_pb2.CampaignRequest:
        request = election_pb2.CampaignRequest(
            election=self._election, value=self._value, sequence=sequence)
        request.ttl.CopyFrom(self._ttl)
        # Recorded before gRPC sends it: an earlier send time only makes the deadline safer.
        self._sent.record(sequence, time.monotonic())
        return request

    def _requests(self) -> Iterator[election_pb2.CampaignRequest]:
        """One request at once, then one every ttl/4 and one per proclaim, until told to stop."""
        sequence = 1
        yield self._request(sequence)
        due = time.monotonic() + self._period
        while True:
            try:
                signal = self._control.get(timeout=max(0.0, due - time.monotonic()))
            except queue.Empty:
                # After a long pause of this process, one request now rather than a burst.
                due = max(due + self._period, time.monotonic())
                sequence += 1
                yield self._request(sequence)
                continue
            if isinstance(signal, _Value):
                self._value = signal.value
                sequence += 1
                yield self._request(sequence)
                continue
            return  # _HALF_CLOSE or _STOP

    def _read(self) -> None:
        code, details = grpc.StatusCode.OK, ""
        try:
            for response in self._call:
                sent = self._sent.sent_at(response.sequence) if response.sequence > 0 else None
                self._on_answer(response, sent)
        except grpc.RpcError as e:
            code = e.code() if isinstance(e.code(), grpc.StatusCode) else grpc.StatusCode.UNKNOWN
            details = e.details() or ""
        except Exception as e:  # a bug here must still end the stream's owner, not hang it
            _log.exception("Campaign reader of election '%s' failed", self._election)
            code, details = grpc.StatusCode.UNKNOWN, type(e).__name__
            self._call.cancel()
        self._control.put(_STOP)  # wake the request generator so that gRPC's thread ends
        self._ending = (code, details)
        self._ended.set()
        self._on_end(code, details)

    # --- what the owner does -----------------------------------------------------------------

    def send_value(self, value: str) -> None:
        """Sends a request with ``value`` at once; later requests carry it too."""
        self._control.put(_Value(value))

    def half_close(self) -> None:
        """Ends the requests: the server resigns the leadership (or withdraws the candidacy)
        and ends the stream OK."""
        self._control.put(_HALF_CLOSE)

    def wait_end(self, timeout: Optional[float]) -> Optional[Ending]:
        """The stream's status once it ended, or None when it did not within ``timeout``."""
        if not self._ended.wait(timeout):
            return None
        return self._ending

    def cancel(self) -> None:
        """Leaves the stream: the server stops renewing and the leadership runs out."""
        self._call.cancel()
        self._control.put(_STOP)
