"""How calls whose outcome is unknown are retried."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of ``UNAVAILABLE`` (any call) and ``DEADLINE_EXCEEDED`` (Acquire only).

    A retry is the same call with the same token, so it can never take a second lock. The
    backoff doubles from ``initial_backoff`` up to ``max_backoff`` (seconds).
    """

    max_attempts: int = 4
    initial_backoff: float = 0.05
    max_backoff: float = 1.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.initial_backoff < 0 or self.max_backoff < self.initial_backoff:
            raise ValueError("backoff must be non-negative and max_backoff >= initial_backoff")

    @classmethod
    def none(cls) -> "RetryPolicy":
        """No retries: one attempt per call."""
        return cls(max_attempts=1, initial_backoff=0.0, max_backoff=0.0)

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return float(min(self.initial_backoff * (2 ** min(attempt - 1, 30)), self.max_backoff))
