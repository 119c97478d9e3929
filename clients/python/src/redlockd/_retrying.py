"""Whether, and after how long, a failed unary call is tried again: one decision, without I/O,
for every idempotent unary call of the sync client and of redlockd.aio (Release, Extend,
Leader, Acquire with the client's own token, and the fire-and-forget Releases).

``UNAVAILABLE`` is retried until the call's own deadline (the call timeout from the first
attempt; for an Acquire, its wait on top), not for a fixed number of attempts: a replica that
restarts is refused for as long as it takes to come back, and a channel's round_robin answers
"connections to all backends failing" until its connections to the replicas that stayed up are
back from their reconnect backoff, which may take longer than four quick attempts. Each retry
waits the policy's backoff, or the server's pushback with jitter (rule 17); a wait that would
end past the deadline is not begun. ``DEADLINE_EXCEEDED`` (Acquire only) is retried for the
policy's attempts, as before: each attempt gets a timeout of its own there, so time cannot
bound it. A policy of one attempt (``RetryPolicy.none()``) retries nothing.
"""
from __future__ import annotations

from typing import Any, Optional

import grpc

from ._pushback import DO_NOT_RETRY, jittered
from .retry import RetryPolicy

__all__ = ["retry_wait"]


def retry_wait(code: Any, pushback: Optional[float], attempt: int, policy: RetryPolicy,
               now: float, deadline: float, timeouts: Optional[int] = None) -> Optional[float]:
    """Seconds to wait before attempt ``attempt + 1`` of a call whose attempt ``attempt`` ended
    ``code`` (with the server's ``pushback``: seconds, :data:`DO_NOT_RETRY` or None) at ``now``,
    or None: do not retry. ``deadline``: when the call as a whole must be over. ``timeouts``:
    for an Acquire, whose ``DEADLINE_EXCEEDED`` may hide a grant and is retried with the same
    token, how many of its attempts ended so (None: the call retries no DEADLINE_EXCEEDED)."""
    if policy.max_attempts <= 1 or pushback == DO_NOT_RETRY:
        return None
    wait = policy.backoff(attempt) if pushback is None else jittered(pushback)
    if code == grpc.StatusCode.UNAVAILABLE:
        return wait if now + wait < deadline else None
    if code == grpc.StatusCode.DEADLINE_EXCEEDED and timeouts is not None:
        return wait if timeouts < policy.max_attempts else None
    return None
