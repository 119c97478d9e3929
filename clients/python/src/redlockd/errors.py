"""The client's errors: each carries the gRPC status code and the server's message.

Messages name the resource and the numbers involved, never the token: whoever holds a token
can release the lock, so it must not leak into logs through an exception.
"""
from __future__ import annotations

import grpc

__all__ = ["LockServiceError", "LockNotAcquired", "LeaseLost"]


class LockServiceError(Exception):
    """A lock call failed; ``code`` (a :class:`grpc.StatusCode`) and ``details`` say how."""

    def __init__(self, code: grpc.StatusCode, details: str = "") -> None:
        self.code = code
        self.details = details or ""
        super().__init__(f"{code.name}: {self.details}" if self.details else code.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code.name}, details={self.details!r})"


class LockNotAcquired(LockServiceError):
    """Someone else held the lock for the whole wait (``ABORTED``). Never retried."""


class LeaseLost(LockServiceError):
    """The lease can no longer be relied on: it expired, was taken over, or its renewals could
    not reach a quorum before its validity ran out. Stop touching the protected resource."""


def from_rpc_error(error: grpc.RpcError) -> LockServiceError:
    """The client error for a failed call: ``LockNotAcquired`` for ``ABORTED``, else the base."""
    code = _code_of(error)
    details = _details_of(error)
    if code == grpc.StatusCode.ABORTED:
        return LockNotAcquired(code, details)
    return LockServiceError(code, details)


def _code_of(error: grpc.RpcError) -> grpc.StatusCode:
    code = getattr(error, "code", None)
    result = code() if callable(code) else None
    return result if isinstance(result, grpc.StatusCode) else grpc.StatusCode.UNKNOWN


def _details_of(error: grpc.RpcError) -> str:
    details = getattr(error, "details", None)
    result = details() if callable(details) else None
    return result or ""
