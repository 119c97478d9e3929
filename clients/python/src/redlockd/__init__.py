"""redlockd: the Python client of the redlockd distributed-lock service.

::

    import redlockd
    from redlockd import LockClient

    client = LockClient(redlockd.channel(["10.0.0.1:50051", "10.0.0.2:50051"]))
    with client.acquire("orders/42", ttl=10, wait=2) as lease:
        store.write(order, fencing_token=lease.fencing_token)

    with client.campaign("scheduler", "10.0.0.7:8080", ttl=10) as leadership:
        run_scheduler(term=leadership.term, still_leading=leadership.is_leader)
"""
from ._channel import channel
from ._tokens import new_token
from .client import LockClient
from .election import Leader, Leadership, Observation
from .errors import LeaseLost, LockNotAcquired, LockServiceError
from .lease import Lease
from .retry import RetryPolicy

__all__ = [
    "LockClient",
    "Lease",
    "Leadership",
    "Leader",
    "Observation",
    "RetryPolicy",
    "LockServiceError",
    "LockNotAcquired",
    "LeaseLost",
    "new_token",
    "channel",
]

__version__ = "0.1.0"
