#!/usr/bin/env python3
"""Holds one kept lease for silent_replica.py and says, one JSON line each, when its deadline
moved and when it was lost. ``--aio``: with redlockd.aio instead of the sync client.

    hold.py --server HOST:PORT,HOST:PORT --resource R --ttl SECONDS [--aio]

Lines: {"event":"held"}, then {"event":"renewed","mono_ns":"..."} for each move of the deadline
(CLOCK_MONOTONIC, read when the move was seen: polled every 5 ms), {"event":"lost","mono_ns":...}.
A line "release" on standard input releases the lease: {"event":"released","released":bool}.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from typing import Any

import redlockd
import redlockd.aio


def emit(**event: Any) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def watch(lease: Any, stop: threading.Event) -> None:
    """Reports each move of the deadline, and the loss, from a thread of its own."""
    deadline, lost = lease.deadline, False
    while not stop.wait(0.005):
        now = lease.deadline
        if now > deadline:
            deadline = now
            emit(event="renewed", mono_ns=str(time.monotonic_ns()))
        if not lost and lease.lost_error is not None:
            lost = True
            emit(event="lost", mono_ns=str(time.monotonic_ns()), error=str(lease.lost_error))


def hold_sync(servers: list, resource: str, ttl: float) -> None:
    channel = redlockd.channel(servers)
    lease = redlockd.LockClient(channel).acquire(resource, ttl=ttl).keep_alive()
    emit(event="held")
    stop = threading.Event()
    threading.Thread(target=watch, args=(lease, stop), daemon=True).start()
    sys.stdin.readline()
    stop.set()
    emit(event="released", released=lease.release())
    channel.close()


async def hold_aio(servers: list, resource: str, ttl: float) -> None:
    channel = redlockd.aio.channel(servers)
    lease = (await redlockd.aio.AsyncLockClient(channel).acquire(resource, ttl=ttl)).keep_alive()
    emit(event="held")
    stop = threading.Event()
    threading.Thread(target=watch, args=(lease, stop), daemon=True).start()
    await asyncio.to_thread(sys.stdin.readline)
    stop.set()
    emit(event="released", released=await lease.release())
    await channel.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--resource", required=True)
    parser.add_argument("--ttl", type=float, default=5.0)
    parser.add_argument("--aio", action="store_true")
    args = parser.parse_args()
    servers = args.server.split(",")
    if args.aio:
        asyncio.run(hold_aio(servers, args.resource, args.ttl))
    else:
        hold_sync(servers, args.resource, args.ttl)


if __name__ == "__main__":
    main()
