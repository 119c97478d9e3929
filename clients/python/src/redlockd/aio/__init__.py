"""redlockd for asyncio: :class:`AsyncLockClient` on grpc.aio, with the same names and rules as
the sync :class:`redlockd.LockClient`.

::

    import redlockd.aio

    async def main() -> None:
        channel = redlockd.aio.channel(["10.0.0.1:50051", "10.0.0.2:50051"])
        client = redlockd.aio.AsyncLockClient(channel)
        async with client.acquire("orders/42", ttl=10, wait=2) as lease:
            lease.keep_alive()
            await store.write(order, fencing_token=lease.fencing_token)
        await channel.close()
"""
from ..election import Leader
from ..errors import LeaseLost, LockNotAcquired, LockServiceError
from ..retry import RetryPolicy
from .client import AsyncLockClient, channel
from .election import AsyncLeaderStream, AsyncLeadership, AsyncObservation
from .lease import AsyncLease

__all__ = [
    "AsyncLockClient",
    "AsyncLease",
    "AsyncLeadership",
    "AsyncLeaderStream",
    "AsyncObservation",
    "Leader",
    "RetryPolicy",
    "LockServiceError",
    "LockNotAcquired",
    "LeaseLost",
    "channel",
]
