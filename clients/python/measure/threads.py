#!/usr/bin/env python3
"""How many threads the sync client spends per kept lease and per leadership (issue 42): the
process's thread count before and after N of each, with the service (tests/fakeserver.py) in a
child process so that its threads do not count, and after they are released and resigned.

    clients/python/target/venv/bin/python clients/python/measure/threads.py [--count 5]

after clients/python/check.sh (the venv). Prints one line each. Two per stream (grpcio's thread
that sends its requests, and the client's that reads its answers), and one per channel while any
call is open on it (grpcio's channel thread): the first batch shows 2 + 1/N.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def serve() -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from fakeserver import Replica  # the fake's defaults: echo every KeepAlive, lead at once

    replica = Replica()
    print(replica.port, flush=True)
    sys.stdin.readline()  # until the parent is done


def settled(seconds: float = 1.0) -> int:
    """The thread count once the streams opened so far have started their threads."""
    time.sleep(seconds)
    return threading.active_count()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5, help="kept leases, then leaderships")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    import redlockd

    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        port = server.stdout.readline().strip()
        channel = redlockd.channel([f"127.0.0.1:{port}"])
        client = redlockd.LockClient(channel)
        # The channel's, the timer's and gRPC's own streaming threads, started once per process.
        client.acquire("measure/warm", ttl=10).keep_alive().release()
        before = settled()
        leases = [client.acquire(f"measure/{i}", ttl=10).keep_alive() for i in range(args.count)]
        kept = settled()
        print(f"{(kept - before) / args.count:.1f} threads per kept lease ({args.count} leases)")
        leaderships = [client.campaign(f"measure/e{i}", "v", ttl=10) for i in range(args.count)]
        leading = settled()
        print(f"{(leading - kept) / args.count:.1f} threads per leadership ({args.count} leaderships)")
        for lease in leases:
            lease.release()
        for leadership in leaderships:
            leadership.resign()
        print(f"{settled() - before} threads left after the releases and resignations")
        channel.close()
    finally:
        server.stdin.close()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
