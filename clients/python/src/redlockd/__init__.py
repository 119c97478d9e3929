"""redlockd: the Python client of the redlockd distributed-lock service.

::

    import redlockd
    from redlockd import LockClient

    client = LockClient(redlockd.channel(["10.0.0.1:50051", "10.0.0.2:50051"]))
    with client.acquire("orders/42", ttl=10, wait=2) as lease:
        store.write(order, fencing_token=lease.fencing_token)

    with client.campaign("scheduler", "10.0.0.7:8080", ttl=10) as leadership:
        run_scheduler(term=leadership.term, still_leading=lambda: leadership.is_leader)
"""
# Without its two runtime packages the client cannot load: say which, and how to install them,
# instead of a ModuleNotFoundError from deep inside the generated stubs.
try:
    import google.protobuf  # noqa: F401
    import grpc  # noqa: F401
except ModuleNotFoundError as _missing:
    if _missing.name not in ("grpc", "google", "google.protobuf"):
        raise
    raise ModuleNotFoundError(
        f"redlockd needs the grpcio and protobuf packages, and {_missing.name} is not installed: "
        "apt-get install python3-grpcio python3-protobuf (Debian), or pip install grpcio protobuf",
        name=_missing.name,
    ) from None

from ._channel import channel
from ._tokens import new_token
from .client import LockClient
from .election import Leader, LeaderStream, Leadership, Observation
from .errors import LeaseLost, LockNotAcquired, LockServiceError
from .lease import Lease
from .retry import RetryPolicy

__all__ = [
    "LockClient",
    "Lease",
    "Leadership",
    "Leader",
    "Observation",
    "LeaderStream",
    "RetryPolicy",
    "LockServiceError",
    "LockNotAcquired",
    "LeaseLost",
    "new_token",
    "channel",
]

__version__ = "0.1.0"
