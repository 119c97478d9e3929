"""Lease tokens made on the client side.

A client that chooses its token before the first Acquire can retry that Acquire after a lost
answer (deadline, reconnect) without leaking a lock or blocking on itself: the server refreshes
the lease it already holds under that token instead of granting a second one.
"""
from __future__ import annotations

import base64
import secrets

#: 192 bits of CSPRNG output; the contract asks for at least 128.
TOKEN_BYTES = 24


def new_token() -> str:
    """A fresh token: 32 characters of the base64url alphabet, no padding."""
    return base64.urlsafe_b64encode(secrets.token_bytes(TOKEN_BYTES)).rstrip(b"=").decode("ascii")
