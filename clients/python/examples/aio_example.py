#!/usr/bin/env python3
"""The asyncio client (redlockd.aio): takes the lock of examples/python-aio, then leads the
election examples/python-aio-election with lead(), observing it as an async iterator.

    python aio_example.py --server HOST:PORT[,HOST:PORT...]      (default 127.0.0.1:50051)

docs/clients.md quotes the part between the docs markers (PythonDocsExamplesTest checks that
and runs this program against a real server).
"""
import argparse
import asyncio

try:
    import redlockd.aio
except ModuleNotFoundError as missing:  # grpcio or protobuf: the message says how to install them
    raise SystemExit(f"aio_example.py: {missing}") from None
from redlockd.aio import AsyncLeadership, AsyncLockClient


async def write_with_fence(fencing_token: int) -> None:
    """Stands for a write to the protected resource, which refuses a lower token than it saw."""
    await asyncio.sleep(0.5)


async def example(server: str) -> None:
    channel = redlockd.aio.channel(server.split(","))  # made on the loop; yours to close
    try:
        # --- docs example begins: asyncio ---
        client = AsyncLockClient(channel)

        async with client.acquire("examples/python-aio", ttl=10, wait=5) as lease:
            print(f"acquired {lease.resource}: fencing token {lease.fencing_token}")
            lease.keep_alive()  # a task renews it until released or lost
            await write_with_fence(lease.fencing_token)
        print("released")

        async def work(leadership: AsyncLeadership) -> int:  # cancelled the moment it is lost
            print(f"leading in term {leadership.term}")
            async with client.observe("examples/python-aio-election") as changes:
                async for leader in changes:  # the current leader, then every change
                    print(f"observed: {leader.value if leader else 'no leader'}")
                    break
            return leadership.term

        term = await client.lead("examples/python-aio-election", "10.0.0.7:8080", ttl=10, work=work)
        print(f"resigned after term {term}")
        # --- docs example ends ---
    finally:
        await channel.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051",
                        help="HOST:PORT of redlockd, or several, comma-separated")
    args = parser.parse_args()
    asyncio.run(example(args.server))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
