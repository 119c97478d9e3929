#!/usr/bin/env python3
"""The asyncio client's conformance runner: performs one scenario of
clients/conformance/README.md with redlockd.aio.AsyncLockClient and prints what it saw, one JSON
object per line, exactly as runner.py (whose output helpers and belief thread it shares).

    runner_aio.py --server HOST:PORT[,HOST:PORT...] --scenario NAME --resource R

Everything the client does runs on one event loop; the harness's answers at `await` points are
read on a worker thread (asyncio.to_thread), so that the kept streams go on meanwhile. The
beliefs are reported from runner.py's thread, every 20 ms.
"""
from __future__ import annotations

import asyncio
import random
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

import grpc

import redlockd.aio
from redlockd import LeaseLost, LockServiceError
from redlockd._proto import lock_pb2
from redlockd.aio import AsyncLease, AsyncLeadership, AsyncLockClient
from redlockd.aio._tasks import run as run_procedure
from runner import (Losses, log_if_asked, PERMIT_WORKERS, PERMITS, PERMITS_FOR, RESTART_ROUNDS, Beliefs, Facts, describe,
                    emit, error_fact, failed, leader_fact, ms, not_released, parse_args,
                    permit_event, servers_of)

ORIGIN = time.monotonic()


class AsyncRunner:
    def __init__(self, servers: List[str], resource: str) -> None:
        self.servers = servers
        self.resource = resource
        self.channels: List[grpc.aio.Channel] = []
        self.beliefs = Beliefs()
        self.count = 0
        self.elections = 0
        self.hold_ttl = 10.0  # hold-many's ttl, seconds

    def client(self, call_timeout: float = 5.0) -> AsyncLockClient:
        """A client with the defaults, on a channel of its own to every --server (rule 16)."""
        channel = redlockd.aio.channel(self.servers)
        self.channels.append(channel)
        return AsyncLockClient(channel, call_timeout=call_timeout)

    async def close(self) -> None:
        self.beliefs.close()
        for channel in self.channels:
            await channel.close()

    @staticmethod
    async def await_point(name: str) -> None:
        emit({"event": "await", "name": name})
        if not await asyncio.to_thread(sys.stdin.readline):
            raise RuntimeError(f"the harness closed standard input at {name}")

    @staticmethod
    async def error_of(call: Callable[[], Awaitable[Any]]) -> Facts:
        try:
            await call()
        except LockServiceError as e:
            return describe(e)
        raise AssertionError("the call succeeded")

    # --- scenarios ---------------------------------------------------------------------------

    async def acquire_contended(self) -> Facts:
        a = self.client()
        lease = await a.acquire(self.resource, ttl=10, wait=0)
        self.beliefs.watch("lease", lease)
        await self.await_point("held")
        b = self.client()
        tried = await b.try_acquire(self.resource, ttl=10)
        competitor = await self.error_of(lambda: b.acquire(self.resource, ttl=10, wait=0.3))
        facts = {
            "fencing_token": str(lease.fencing_token),
            "valid": lease.valid,
            "remaining_ms": ms(lease.remaining),
            "lease_string": str(lease),
            "try_acquire": "none" if tried is None else "lease",
            "competitor_error": competitor,
        }
        self.beliefs.end("lease")
        facts["released"] = await lease.release()
        return facts

    async def release_twice(self) -> Facts:
        lease = await self.client().acquire(self.resource, ttl=10, wait=0)
        self.beliefs.watch("lease", lease)
        await self.await_point("held")
        self.beliefs.end("lease")
        first = await lease.release()
        second = await lease.release()
        return {"first_release": first, "second_release": second, "valid_after": lease.valid}

    async def extend(self) -> Facts:
        lease = await self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        await asyncio.sleep(0.5)
        await lease.extend(3)
        facts: Facts = {"remaining_after_extend_ms": ms(lease.remaining)}
        await self.await_point("extended")
        await asyncio.sleep(2.0)
        facts["valid_after_first_ttl"] = lease.valid
        self.beliefs.end("lease")
        facts["released"] = await lease.release()
        return facts

    async def keep_alive(self) -> Facts:
        lease = await self.client().acquire(self.resource, ttl=1, wait=0)
        self.beliefs.watch("lease", lease)
        lost: List[LeaseLost] = []
        lease.keep_alive().on_lost(lost.append)
        await asyncio.sleep(1.5)
        await self.await_point("kept")
        await asyncio.sleep(1.5)
        facts = {"valid_at_end": lease.valid, "lost": bool(lost)}
        self.beliefs.end("lease")
        facts["released"] = await lease.release()
        return facts

    async def majority_frozen(self) -> Facts:
        lease = await self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        calls: List[Tuple[float, float, LeaseLost]] = []
        first_call = asyncio.Event()

        def on_lost(error: LeaseLost) -> None:
            calls.append((time.monotonic(), lease.deadline, error))
            first_call.set()

        lease.keep_alive().on_lost(on_lost)
        await asyncio.sleep(0.3)
        await self.await_point("freeze")
        frozen = time.monotonic()
        await wait_event(first_call, 10)
        await asyncio.sleep(0.5)
        facts: Facts = {"lost_calls": len(calls)}
        if calls:
            at, deadline, error = calls[0]
            facts["margin_ms"] = ms(deadline - at)
            facts["waited_ms"] = ms(at - frozen)
            facts["lost_error"] = describe(error)
        facts["valid_after_lost"] = lease.valid
        self.beliefs.end("lease")
        return facts

    async def lost_answer(self) -> Facts:
        impatient = self.client(call_timeout=0.3)
        await self.await_point("pause")
        start = time.monotonic()
        lease = await impatient.acquire(self.resource, ttl=10, wait=0)
        elapsed = time.monotonic() - start
        self.beliefs.watch("lease", lease)
        facts: Facts = {"acquired": lease.valid, "elapsed_ms": ms(elapsed)}
        await self.await_point("held")
        self.beliefs.end("lease")
        try:
            facts["released"] = await lease.release()
        except LockServiceError as e:  # no answer within 300 ms: reported, the harness judges it
            facts["release_error"] = describe(e)
        return facts

    async def invalid_argument(self) -> Facts:
        c = self.client()
        return {
            "empty_resource": await self.error_of(lambda: c.acquire("", ttl=10, wait=0)),
            "zero_ttl": await self.error_of(lambda: c.acquire(self.resource, ttl=0, wait=0)),
            "long_resource": await self.error_of(
                lambda: c.acquire(self.resource + "x" * 600, ttl=10, wait=0)),
        }

    async def concurrent_holders(self) -> Facts:
        clients = [self.client(), self.client()]
        sections: List[List[Any]] = []

        async def work(lease: AsyncLease) -> None:
            start = time.monotonic()
            await asyncio.sleep(0.005)
            end = time.monotonic()
            sections.append([ms(start - ORIGIN), ms(end - ORIGIN), str(lease.fencing_token)])

        async def worker(client: AsyncLockClient) -> None:
            for _ in range(5):
                await client.with_lock(self.resource, 2, 20, work)

        await asyncio.gather(*(worker(clients[w % 2]) for w in range(8)))
        return {"sections": sections}

    async def permits(self) -> Facts:
        """As runner.py's: N + 3 worker tasks, each with its own client over every replica,
        take one of N permits in turn for 4 s, each hold reported as a ``permit`` event."""
        clients = [self.client() for _ in range(PERMIT_WORKERS)]
        acquired: List[int] = []
        errors: List[Facts] = []
        until = time.monotonic() + PERMITS_FOR

        async def worker(i: int, client: AsyncLockClient) -> None:
            while time.monotonic() < until:
                try:
                    lease = await client.acquire_permit(self.resource, PERMITS, ttl=2, wait=3)
                    start_ns = time.monotonic_ns()  # after the grant
                    lease.keep_alive()
                    await asyncio.sleep(random.uniform(0.05, 0.15))
                    end_ns = time.monotonic_ns()  # before the release
                    emit(permit_event(i, lease.permit, lease.fencing_token, start_ns, end_ns))
                    acquired.append(lease.permit)
                    if not await lease.release():
                        errors.append(not_released(lease.permit))
                except Exception as e:  # noted; the worker goes on
                    errors.append(error_fact(e))
                    await asyncio.sleep(0.05)  # not a hot loop of failures

        await asyncio.gather(*(worker(i, c) for i, c in enumerate(clients)))
        return {"acquired": len(acquired), "permits_seen": sorted(set(acquired)), "errors": errors}

    async def campaign_handover(self) -> Facts:
        a_client, b_client, c_client = self.client(), self.client(), self.client()
        a = await a_client.campaign(self.resource, "a", ttl=2)
        self.beliefs.watch("leadership", a)
        a_lost: List[LeaseLost] = []
        a.on_lost(a_lost.append)
        await self.await_point("leading")
        facts: Facts = {"term_a": str(a.term)}
        facts["c_error"] = await self.error_of(
            lambda: c_client.campaign(self.resource, "c", ttl=2, wait=0.3))
        b_at: Dict[str, float] = {}

        async def campaign_b() -> AsyncLeadership:
            try:
                return await b_client.campaign(self.resource, "b", ttl=2)
            finally:
                b_at["at"] = time.monotonic()

        b_task = asyncio.ensure_future(campaign_b())
        await asyncio.sleep(1.5)  # A leads on only by its renewals now
        facts["b_led_early"] = b_task.done()
        await a.proclaim("a2")
        facts["leader_after_proclaim"] = leader_fact(await a_client.leader(self.resource))
        self.beliefs.end("leadership")
        resign_at = time.monotonic()
        facts["resigned"] = await a.resign()
        b = await asyncio.wait_for(b_task, 10)
        facts["handover_ms"] = ms(b_at["at"] - resign_at)
        facts["a_leader_after_resign"] = a.is_leader
        facts["a_lost"] = bool(a_lost)
        facts["term_b"] = str(b.term)
        facts["b_value"] = b.value
        facts["b_is_leader"] = b.is_leader
        facts["b_resigned"] = await b.resign()
        facts["second_resign"] = await b.resign()
        facts["leader_at_end"] = leader_fact(await a_client.leader(self.resource))
        return facts

    async def observe(self) -> Facts:
        """The observation as an async iterator, read by a task of its own."""
        first, second = self.client(), self.client()
        events: List[Any] = []
        changed = asyncio.Event()
        changes = first.observe(self.resource)

        async def read() -> None:
            async for leader in changes:
                events.append(leader_fact(leader))
                changed.set()

        reader = asyncio.ensure_future(read())
        await wait_until(lambda: len(events) >= 1, changed, 5)
        a = await first.campaign(self.resource, "a", ttl=2)
        self.beliefs.watch("leadership", a)
        await asyncio.sleep(0.3)
        self.beliefs.end("leadership")
        await a.resign()
        await asyncio.sleep(0.3)
        b = await second.campaign(self.resource, "b", ttl=2)
        await asyncio.sleep(0.3)
        await b.resign()
        await wait_until(lambda: len(events) >= 5 and events[-1] is None, changed, 5)
        changes.close()
        at_close = len(events)
        await asyncio.sleep(0.3)
        late = len(events) - at_close
        await asyncio.wait_for(reader, 5)
        return {"events": list(events[:at_close]), "term_a": str(a.term), "term_b": str(b.term),
                "late_events": late}

    async def extend_while_kept(self) -> Facts:
        lease = await self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        lost: List[LeaseLost] = []
        lost_once = asyncio.Event()

        def on_lost(error: LeaseLost) -> None:
            lost.append(error)
            lost_once.set()

        lease.keep_alive().on_lost(on_lost)
        await self.await_point("kept")
        await lease.extend(6)
        await self.await_point("longer")
        facts: Facts = {"fencing_token": str(lease.fencing_token),
                        "valid_after_longer": lease.valid}
        await asyncio.sleep(0.5)
        await lease.extend(1)
        facts["remaining_after_shorter_ms"] = ms(lease.remaining)
        await self.await_point("shorter")
        await wait_event(lost_once, 3)
        facts["lost_calls"] = len(lost)
        facts["valid_at_end"] = lease.valid
        self.beliefs.end("lease")
        facts["released"] = await lease.release()
        return facts

    async def replica_restart(self) -> Facts:
        client = self.client()
        lease = await client.acquire(self.resource, ttl=3, wait=0)
        self.beliefs.watch("lease", lease)
        lease_lost: List[LeaseLost] = []
        lease.keep_alive().on_lost(lease_lost.append)
        leadership = await client.campaign(self.resource, "a", ttl=3)
        self.beliefs.watch("leadership", leadership)
        leadership_lost: List[LeaseLost] = []
        leadership.on_lost(leadership_lost.append)
        facts: Facts = {"fencing_token": str(lease.fencing_token), "term": str(leadership.term)}
        await self.await_point("kept")
        facts.update({
            "fencing_token_after": str(lease.fencing_token),
            "term_after": str(leadership.term),
            "valid": lease.valid,
            "is_leader": leadership.is_leader,
            "lease_lost_calls": len(lease_lost),
            "leadership_lost_calls": len(leadership_lost),
        })
        self.beliefs.end("lease")
        facts["released"] = await lease.release()
        self.beliefs.end("leadership")
        facts["resigned"] = await leadership.resign()
        return facts

    async def release_during_restart(self) -> Facts:
        """As runner.py's: unary calls right after a replica got SIGTERM; Describe through the
        client's call path for idempotent unary calls (the client has no Describe of its own)."""
        client = self.client()
        extends: List[Any] = []
        describes: List[Any] = []
        releases: List[Any] = []

        async def extend(lease: AsyncLease) -> str:
            await lease.extend(10)
            return "ok"

        async def held() -> bool:
            response, _ = await run_procedure(client._calls.unary(
                client._calls.lock_stub.Describe, lock_pb2.DescribeRequest(resource=self.resource)))
            return bool(response.held)

        for _ in range(RESTART_ROUNDS):
            lease = await client.acquire(self.resource, ttl=10, wait=0)
            await self.await_point("held")  # the harness sends SIGTERM to a replica, and answers at once
            extends.append(await outcome_of(extend(lease)))
            describes.append(await outcome_of(held()))
            releases.append(await outcome_of(lease.release()))
        return {"extends": extends, "describes": describes, "releases": releases}

    async def shutdown_race(self) -> Facts:
        lease = await self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        lost: List[LeaseLost] = []
        lease.keep_alive().on_lost(lost.append)
        facts: Facts = {"fencing_token": str(lease.fencing_token)}
        await self.await_point("held")
        facts.update({
            "fencing_token_after": str(lease.fencing_token),
            "valid": lease.valid,
            "lost_calls": len(lost),
        })
        self.beliefs.end("lease")
        facts["released"] = await lease.release()
        return facts

    async def lead(self) -> Facts:
        """lead(): A's work task is cancelled the moment A's leadership is lost (a majority
        frozen), before its deadline; B's work starts only after."""
        a_client, b_client = self.client(), self.client()
        a: Dict[str, Any] = {}
        b: Dict[str, Any] = {}
        a_started = asyncio.Event()

        async def work_a(leadership: AsyncLeadership) -> None:
            a["start"], a["term"] = time.monotonic(), leadership.term
            self.beliefs.watch("leadership", leadership)
            a_started.set()
            try:
                await asyncio.Event().wait()  # until cancelled
            except asyncio.CancelledError:
                a["cancel_at"], a["deadline"] = time.monotonic(), leadership.deadline
                self.beliefs.end("leadership")
                raise

        async def work_b(leadership: AsyncLeadership) -> None:
            b["start"], b["term"] = time.monotonic(), leadership.term

        async def run(client: AsyncLockClient, value: str,
                      work: Callable[[AsyncLeadership], Awaitable[None]]) -> Any:
            try:
                await client.lead(self.resource, value, 2, work)
                return "ok"
            except LockServiceError as e:
                return describe(e)

        a_task = asyncio.ensure_future(run(a_client, "a", work_a))
        await wait_event(a_started, 10)
        if not a_started.is_set():
            raise RuntimeError("A's work did not start within 10 s")
        await self.await_point("leading")
        b_task = asyncio.ensure_future(run(b_client, "b", work_b))
        await asyncio.sleep(0.3)
        b_early = "start" in b
        await self.await_point("freeze")
        await asyncio.wait([a_task], timeout=10)
        await self.await_point("thaw")
        await asyncio.wait([b_task], timeout=10)
        a_result = a_task.result() if a_task.done() else None
        return {
            "term_a": str(a["term"]),
            "cancel_margin_ms": ms(a["deadline"] - a["cancel_at"]) if "cancel_at" in a else None,
            "a_error": a_result if a_result != "ok" else None,
            "b_early": b_early,
            "b_after_a_ms": (ms(b["start"] - a["cancel_at"])
                             if "start" in b and "cancel_at" in a else None),
            "term_b": str(b["term"]) if "term" in b else None,
            "b_result": b_task.result() if b_task.done() else None,
        }

    async def hold_many(self) -> Facts:
        """The rolling-restart run's load: many kept leases and leaderships on one client."""
        client = self.client()
        leases: List[AsyncLease] = []
        fences: List[int] = []
        leases_lost: List[LeaseLost] = []
        losses = Losses()
        for i in range(self.count):
            lease = await client.acquire(f"{self.resource}/{i}", ttl=self.hold_ttl, wait=10)
            lease.keep_alive().on_lost(leases_lost.append).on_lost(losses.record(f"lease {i}"))
            leases.append(lease)
            fences.append(lease.fencing_token)
        leaderships: List[AsyncLeadership] = list(await asyncio.gather(*(
            client.campaign(f"{self.resource}/e{i}", "python-aio", ttl=self.hold_ttl)
            for i in range(self.elections))))
        terms = [p.term for p in leaderships]
        leaderships_lost: List[LeaseLost] = []
        for i, p in enumerate(leaderships):
            p.on_lost(leaderships_lost.append)
            p.on_lost(losses.record(f"leadership {i}"))
        losses.held()
        await self.await_point("held")
        facts: Facts = {
            "leases": len(leases),
            "leases_valid": sum(1 for lease in leases if lease.valid),
            "leases_lost": len(leases_lost),
            "fencing_changed": sum(1 for lease, fence in zip(leases, fences)
                                   if lease.fencing_token != fence),
            "leaderships": len(leaderships),
            "leading": sum(1 for p in leaderships if p.is_leader),
            "leaderships_lost": len(leaderships_lost),
            "terms_changed": sum(1 for p, term in zip(leaderships, terms) if p.term != term),
            "losses": losses.facts(),
        }
        facts["released"] = sum([1 for lease in leases if await lease.release()])
        facts["resigned"] = sum([1 for p in leaderships if await p.resign()])
        return facts


async def outcome_of(call: Awaitable[Any]) -> Any:
    """What ``call`` returned, or the error it raised (as runner.outcome_of)."""
    try:
        return await call
    except LockServiceError as e:
        return describe(e)


async def wait_event(event: asyncio.Event, timeout: float) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except asyncio.TimeoutError:
        pass


async def wait_until(predicate: Callable[[], bool], changed: asyncio.Event, timeout: float) -> None:
    until = time.monotonic() + timeout
    while not predicate() and time.monotonic() < until:
        changed.clear()
        await wait_event(changed, until - time.monotonic())


SCENARIOS: Dict[str, Callable[[AsyncRunner], Awaitable[Facts]]] = {
    "acquire-contended": AsyncRunner.acquire_contended,
    "release-twice": AsyncRunner.release_twice,
    "extend": AsyncRunner.extend,
    "keep-alive": AsyncRunner.keep_alive,
    "majority-frozen": AsyncRunner.majority_frozen,
    "lost-answer": AsyncRunner.lost_answer,
    "invalid-argument": AsyncRunner.invalid_argument,
    "concurrent-holders": AsyncRunner.concurrent_holders,
    "campaign-handover": AsyncRunner.campaign_handover,
    "observe": AsyncRunner.observe,
    "extend-while-kept": AsyncRunner.extend_while_kept,
    "replica-restart": AsyncRunner.replica_restart,
    # Issue 40's faults are the harness's; the runner does what it does for replica-restart.
    "replica-silent": AsyncRunner.replica_restart,
    "replica-blackhole": AsyncRunner.replica_restart,
    "replica-minority": AsyncRunner.replica_restart,
    "rolling-restart-fast": AsyncRunner.replica_restart,
    "release-during-restart": AsyncRunner.release_during_restart,
    "shutdown-race": AsyncRunner.shutdown_race,
    "lead": AsyncRunner.lead,
    "permits": AsyncRunner.permits,
    "hold-many": AsyncRunner.hold_many,
}


async def run(scenario: str, runner: AsyncRunner) -> Optional[Facts]:
    try:
        return await SCENARIOS[scenario](runner)
    finally:
        await runner.close()


def main() -> int:
    log_if_asked()
    args = parse_args(__doc__.splitlines()[0], SCENARIOS)
    runner = AsyncRunner(servers_of(args), args.resource)
    runner.count = args.count
    runner.hold_ttl = args.ttl_ms / 1000
    runner.elections = args.elections
    try:
        facts = asyncio.run(run(args.scenario, runner))
    except Exception as e:
        return failed(args.scenario, e)
    emit({"event": "result", "scenario": args.scenario, **(facts or {})})
    return 0


if __name__ == "__main__":
    sys.exit(main())
