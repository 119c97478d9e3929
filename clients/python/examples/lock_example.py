#!/usr/bin/env python3
"""Takes the lock of examples/python, keeps it alive for about 2 s of "work", and releases it;
then holds it again in a with_lock block.

    python lock_example.py --server HOST:PORT[,HOST:PORT...]      (default 127.0.0.1:50051)

Several addresses (one per replica) go to one channel that spreads the calls over them, so that
the kept lease's stream resumes on another replica if its own goes away.
"""
import argparse
import time

try:
    import redlockd
except ModuleNotFoundError as missing:  # grpcio or protobuf: the message says how to install them
    raise SystemExit(f"lock_example.py: {missing}") from None
from redlockd import LockClient


def write_with_fence(fencing_token: int) -> None:
    """Stands for a write to the protected resource, which refuses a lower token than it saw."""
    time.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051",
                        help="HOST:PORT of redlockd, or several, comma-separated")
    args = parser.parse_args()
    channel = redlockd.channel(args.server.split(","))
    try:
        # --- README example begins ---
        client = LockClient(channel)  # the channel is yours: the client never closes it

        with client.acquire("examples/python", ttl=10, wait=5) as lease:
            print(f"acquired {lease.resource}: fencing token {lease.fencing_token}")
            lease.keep_alive()  # renewed in the background until released or lost
            for _ in range(4):
                if not lease.valid:  # lost: stop touching the resource
                    break
                write_with_fence(lease.fencing_token)
        print("released")

        with client.with_lock("examples/python", ttl=10, wait=5) as lease:  # acquired, kept alive
            write_with_fence(lease.fencing_token)
        # released at the block's end; LeaseLost raised there if the lease was lost in it
        # --- README example ends ---
    finally:
        channel.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
