"""The server's early refusal (rule 17): ``UNAVAILABLE`` with the trailer
``grpc-retry-pushback-ms`` (gRPC's retry design) says how long to stay away before trying again,
or, negative or unparsable, not to try again at all. Waiting at least that long, with jitter,
lets a swamped server (every holder of a restarted replica coming back at once) recover instead
of being hit again by the same crowd at the same instant."""
from __future__ import annotations

import random
from typing import Any, Optional

__all__ = ["DO_NOT_RETRY", "KEY", "jittered", "parse", "pushback_of"]

KEY = "grpc-retry-pushback-ms"

#: What :func:`pushback_of` returns for a negative or unparsable value: do not retry.
DO_NOT_RETRY = -1.0


def parse(value: Any) -> float:
    """A trailer's value: non-negative decimal milliseconds in seconds, else
    :data:`DO_NOT_RETRY`."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        return DO_NOT_RETRY  # negative, fractional, huge or garbage: the server's "do not retry"
    return int(text) / 1000.0


def pushback_of(error: Any) -> Optional[float]:
    """The pushback a failed call (sync or asyncio) carries, in seconds, :data:`DO_NOT_RETRY`,
    or None when it carries none (the caller's own backoff applies)."""
    trailers = getattr(error, "trailing_metadata", None)
    if trailers is None:
        return None
    try:
        metadata = trailers()
    except Exception:  # a call that never got as far as trailers
        return None
    for key, value in metadata or ():
        if key == KEY:
            return parse(value)
    return None


def jittered(pushback: float) -> float:
    """The wait before the retry: a random time between the pushback and 1.5 times it."""
    return pushback * random.uniform(1.0, 1.5)
