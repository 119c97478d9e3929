"""How one acquire goes, without the I/O: the token, the requests, which failures are retried
and after how long, which answers are asked again, and when a token is given back
(:class:`AcquirePlan`), and the procedure that follows it (:func:`acquiring`), which the sync
and the asyncio clients run with their own calls and sleeps (``_ops.py``).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple

import grpc

from . import _durations
from ._clock import Clock
from ._ops import Call, Procedure, Sleep
from ._proto import lock_pb2
from ._pushback import pushback_of
from ._retrying import retry_wait
from ._tokens import new_token
from .errors import LockServiceError, from_rpc_error
from .retry import RetryPolicy

#: Re-asks of a grant that came with less than half its validity left; more means every
#: answer is slow, not the wait.
MAX_REFRESHES = 3

_UNKNOWN_OUTCOME = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def acquiring(plan: "AcquirePlan", method: Any) -> Procedure[Tuple[int, float]]:
    """Follows ``plan`` with Acquire calls (``method``): the grant's fencing token and local
    deadline, or the client's error. Given up on with its outcome unknown (retries exhausted,
    an interrupt, a cancel), it gives the token back."""
    try:
        while True:
            request, timeout = plan.request()
            try:
                response = yield Call(method, request, timeout)
            except grpc.RpcError as e:
                yield Sleep(plan.failed(e))  # raises when not retried
                continue
            granted = plan.answered(response)  # None: ask again
            if granted is not None:
                return granted
    except BaseException:
        plan.abandon()
        raise


class AcquirePlan:
    """One acquire of ``resource``, followed by :func:`acquiring`.

    ``give_back(resource, token, permits)``: Releases nobody waits for, of a token that may have
    been granted after all (retries exhausted, an interrupted call), one per permit named (0: the
    lock).

    ``permits``: 0 for a lock, N >= 1 for one of N permits (a semaphore). A permit given back
    before any answer said which one it is: each of 1..N is given back, since the server may
    have granted any of them (a Release of a permit this token does not hold changes nothing).
    """

    def __init__(self, resource: str, ttl: float, wait: float, owner: str, call_timeout: float,
                 retry: RetryPolicy, clock: Clock,
                 give_back: Callable[[str, str, Sequence[int]], None], permits: int = 0) -> None:
        self.resource = resource
        self.ttl = ttl
        self.permits = permits
        #: Which permit an answer named (0: a lock); a same-token retry gets the same one back.
        self.permit = 0
        self._named = False  # an answer said which permit this token has
        self.token = new_token()
        self._wait = wait
        self._owner = owner
        self._call_timeout = call_timeout
        self._retry = retry
        self._clock = clock
        self._release = give_back
        self._start = clock.now()
        # UNAVAILABLE is retried until then (the wait, and a call timeout for the answer).
        self._deadline = self._start + max(0.0, wait) + call_timeout
        self._attempt = 1
        self._timeouts = 0  # attempts that ended DEADLINE_EXCEEDED: those the policy counts
        self._refreshes = 0
        self._may_hold = False  # an earlier attempt may have been granted
        self._settled = False  # the outcome is known: nothing left to give back on the way out
        self._sent = self._start

    def request(self) -> Tuple[lock_pb2.AcquireRequest, float]:
        """The next request and its call timeout; its send time is noted now."""
        # The first attempt sends the wait as given (a negative one is the server's to
        # refuse); a retry sends what is left of it.
        wait_left = self._wait if not self._may_hold else max(
            0.0, self._wait - (self._clock.now() - self._start))
        request = lock_pb2.AcquireRequest(
            resource=self.resource, ttl=_durations.to_proto(self.ttl),
            wait=_durations.to_proto(wait_left), owner=self._owner, token=self.token,
            permits=self.permits)
        self._sent = self._clock.now()
        return request, max(0.0, wait_left) + self._call_timeout

    def failed(self, error: grpc.RpcError) -> float:
        """The call failed: the seconds to wait before the next attempt, or raises the client's
        error (giving the token back if an attempt may have been granted)."""
        code = error.code()
        unknown = code in _UNKNOWN_OUTCOME
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            self._timeouts += 1
        # A pushback's wait comes out of the Acquire's wait too: the retry sends what is left.
        delay = retry_wait(code, pushback_of(error), self._attempt, self._retry,
                           self._clock.now(), self._deadline, timeouts=self._timeouts)
        if delay is not None:
            self._attempt += 1
            self._may_hold = True
            return delay
        self._settled = True
        if unknown or self._may_hold:
            self._give_back(self.resource, self.token)
        raise from_rpc_error(error) from None

    def answered(self, response: lock_pb2.AcquireResponse) -> Optional[Tuple[int, float]]:
        """The grant's fencing token and local deadline, or None: ask again (the grant came
        with less than half its validity left)."""
        validity = _durations.from_proto(response.lease.validity)
        self.permit, self._named = response.lease.permit, True
        deadline = self._sent + validity
        left = deadline - self._clock.now()
        if left < validity / 2 and self._refreshes < MAX_REFRESHES:
            # Typically after waiting longer than the ttl for another holder: the deadline can
            # only count from when the waiting call was sent. Asked again under the same token,
            # the refreshed answer comes at once.
            self._refreshes += 1
            self._may_hold = True
            return None
        self._settled = True
        if left <= 0:
            self._give_back(self.resource, self.token)
            raise LockServiceError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"resource '{self.resource}': each grant ran out before its answer arrived")
        return response.lease.fencing_token, deadline

    def abandon(self) -> None:
        """Given up on (an exception, an interrupt): gives the token back unless the outcome
        is known."""
        if not self._settled:
            self._settled = True
            self._give_back(self.resource, self.token)

    def _give_back(self, resource: str, token: str) -> None:
        """Gives the token back: the lock, the permit an answer named, or else every permit."""
        if self.permits == 0 or self._named:
            self._release(resource, token, (self.permit,))
        else:
            self._release(resource, token, range(1, self.permits + 1))
