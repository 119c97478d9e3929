#!/usr/bin/env python3
"""The Python client's conformance runner: performs one scenario of clients/conformance/README.md
with redlockd.LockClient and prints what it saw, one JSON object per line. The harness decides
whether that conforms; this program only reports.

    runner.py --server HOST:PORT[,HOST:PORT...] --scenario NAME --resource R

Several --server addresses are all given to the client (redlockd.channel: round_robin over
them). While a scenario holds a lease or a leadership, a background thread reports what the
client believes of it every 20 ms (``belief`` events), until ``belief-end``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

import grpc

import redlockd
from redlockd import Leader, Lease, Leadership, LeaseLost, LockClient, LockServiceError
from redlockd._proto import lock_pb2
from redlockd._threads import run as run_procedure

ORIGIN = time.monotonic()

Facts = Dict[str, Any]


_OUT = threading.Lock()


def emit(event: Facts) -> None:
    line = json.dumps(event) + "\n"
    with _OUT:
        sys.stdout.write(line)
        sys.stdout.flush()


def ms(seconds: float) -> float:
    return seconds * 1000.0


def describe(error: LockServiceError) -> Facts:
    return {"type": type(error).__name__, "code": error.code.name, "message": str(error)}


def error_fact(error: BaseException) -> Facts:
    """An error as the facts report it; one that is not the client's has no gRPC code."""
    if isinstance(error, LockServiceError):
        return describe(error)
    return {"type": type(error).__name__, "code": "UNKNOWN", "message": str(error)}


def outcome_of(call: Callable[[], Any]) -> Any:
    """release-during-restart's notes: what ``call()`` returned, or the error it raised."""
    try:
        return call()
    except LockServiceError as e:
        return describe(e)


#: release-during-restart: rounds, each under a replica's SIGTERM.
RESTART_ROUNDS = 3


def not_released(permit: int) -> Facts:
    """A release that returned false: the permit was no longer held by a quorum."""
    return {"type": "NotReleased", "code": "OK", "message": f"permit {permit}"}


def permit_event(worker: int, permit: int, fencing_token: int, start_ns: int, end_ns: int) -> Facts:
    return {"event": "permit", "worker": worker, "permit": permit,
            "fencing_token": str(fencing_token), "start_ns": str(start_ns), "end_ns": str(end_ns)}


#: The permits scenario: N permits, N + 3 workers, each looping this long (seconds).
PERMITS = 3
PERMIT_WORKERS = PERMITS + 3
PERMITS_FOR = 4.0


def leader_fact(leader: Optional[Leader]) -> Any:
    """``null`` for no leader, else ``[value, "term"]`` (the term as a decimal string)."""
    return None if leader is None else [leader.value, str(leader.term)]


class Beliefs:
    """The belief oracle's input: every 20 ms, from a thread of its own, what the client
    believes of each watched handle (its public validity and remaining time). ``end`` stops a
    handle's reports and prints its ``belief-end``; no belief of it follows."""

    PERIOD = 0.02

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handles: Dict[str, Callable[[], Any]] = {}
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def watch(self, name: str, handle: Any) -> None:
        """``handle``: a lease or a leadership, of the sync client or of redlockd.aio (both are
        read from this thread: their state is behind a lock)."""
        if hasattr(handle, "is_leader"):
            read = lambda: (handle.is_leader, handle.remaining)  # noqa: E731
        elif hasattr(handle, "valid"):
            read = lambda: (handle.valid, handle.remaining)  # noqa: E731
        else:
            raise TypeError(f"cannot watch {type(handle).__name__}")
        with self._lock:
            self._handles[name] = read
            self._report(name, read)  # at once: reporting starts as soon as the handle exists
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="beliefs", daemon=True)
                self._thread.start()

    def end(self, name: str) -> None:
        with self._lock:
            if self._handles.pop(name, None) is not None:
                emit({"event": "belief-end", "handle": name, "mono_ns": str(time.monotonic_ns())})

    def close(self) -> None:
        """Ends every handle still watched (before the result line), and the thread."""
        with self._lock:
            names = list(self._handles)
        for name in names:
            self.end(name)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1)

    def _run(self) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            with self._lock:
                for name, read in self._handles.items():
                    self._report(name, read)
            due += self.PERIOD
            now = time.monotonic()
            if due < now:  # late (a pause of this process): the next one a period from now
                due = now + self.PERIOD
            self._stop.wait(due - now)

    @staticmethod
    def _report(name: str, read: Callable[[], Any]) -> None:  # under the lock
        # CLOCK_MONOTONIC before and after the remaining time: the client read its clock between.
        before_ns = time.monotonic_ns()
        valid, remaining = read()
        mono_ns = time.monotonic_ns()
        valid = bool(valid) and remaining > 0
        emit({"event": "belief", "handle": name, "valid": valid,
              "remaining_ms": ms(remaining) if valid else 0, "mono_ns": str(mono_ns),
              "mono_before_ns": str(before_ns)})


class Losses:
    """A hold-many run's loss callbacks, each with when it came (ms after the "held" await point,
    negative before it) and its status, for the harness's report of where a rolling restart loses."""

    def __init__(self) -> None:
        self.since = time.monotonic()
        self.seen: List[str] = []
        self.lock = threading.Lock()

    def held(self) -> None:
        self.since = time.monotonic()

    def record(self, kind: str) -> Callable[[LeaseLost], None]:
        def on_lost(lost: LeaseLost) -> None:
            at = (time.monotonic() - self.since) * 1000
            with self.lock:
                self.seen.append(f"{kind} {at:+.0f} ms {lost.code.name}: {lost.details[:160]}")
        return on_lost

    def facts(self) -> List[str]:
        with self.lock:
            return list(self.seen)


class Runner:
    def __init__(self, servers: List[str], resource: str) -> None:
        self.servers = servers
        self.resource = resource
        self.channels: List[grpc.Channel] = []
        self.beliefs = Beliefs()
        self.count = 0  # hold-many's leases
        self.elections = 0  # hold-many's leaderships
        self.hold_ttl = 10.0  # hold-many's ttl, seconds

    def client(self, call_timeout: float = 5.0) -> LockClient:
        """A client with the defaults, on a channel of its own to every --server (rule 16)."""
        channel = redlockd.channel(self.servers)
        self.channels.append(channel)
        return LockClient(channel, call_timeout=call_timeout)

    def close(self) -> None:
        self.beliefs.close()
        for channel in self.channels:
            channel.close()

    @staticmethod
    def await_point(name: str) -> None:
        """Tells the harness this point is reached and waits for its answer line."""
        emit({"event": "await", "name": name})
        if not sys.stdin.readline():
            raise RuntimeError(f"the harness closed standard input at {name}")

    @staticmethod
    def error_of(call: Callable[[], Any]) -> Facts:
        try:
            call()
        except LockServiceError as e:
            return describe(e)
        raise AssertionError("the call succeeded")

    # --- scenarios ---------------------------------------------------------------------------

    def acquire_contended(self) -> Facts:
        a = self.client()
        lease = a.acquire(self.resource, ttl=10, wait=0)
        self.beliefs.watch("lease", lease)
        self.await_point("held")
        b = self.client()
        tried = b.try_acquire(self.resource, ttl=10)
        competitor = self.error_of(lambda: b.acquire(self.resource, ttl=10, wait=0.3))
        facts = {
            "fencing_token": str(lease.fencing_token),
            "valid": lease.valid,
            "remaining_ms": ms(lease.remaining),
            "lease_string": str(lease),
            "try_acquire": "none" if tried is None else "lease",
            "competitor_error": competitor,
        }
        self.beliefs.end("lease")
        facts["released"] = lease.release()
        return facts

    def release_twice(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=10, wait=0)
        self.beliefs.watch("lease", lease)
        self.await_point("held")
        self.beliefs.end("lease")
        first = lease.release()
        second = lease.release()
        return {"first_release": first, "second_release": second, "valid_after": lease.valid}

    def extend(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        time.sleep(0.5)
        lease.extend(3)
        facts: Facts = {"remaining_after_extend_ms": ms(lease.remaining)}
        self.await_point("extended")
        time.sleep(2.0)
        facts["valid_after_first_ttl"] = lease.valid
        self.beliefs.end("lease")
        facts["released"] = lease.release()
        return facts

    def keep_alive(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=1, wait=0)
        self.beliefs.watch("lease", lease)
        lost: List[LeaseLost] = []
        lease.keep_alive().on_lost(lost.append)
        time.sleep(1.5)
        self.await_point("kept")
        time.sleep(1.5)
        facts = {"valid_at_end": lease.valid, "lost": bool(lost)}
        self.beliefs.end("lease")
        facts["released"] = lease.release()
        return facts

    def majority_frozen(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        calls: List[Tuple[float, float, LeaseLost]] = []
        first_call = threading.Event()

        def on_lost(error: LeaseLost) -> None:
            calls.append((time.monotonic(), lease.deadline, error))
            first_call.set()

        lease.keep_alive().on_lost(on_lost)
        time.sleep(0.3)
        self.await_point("freeze")
        frozen = time.monotonic()
        first_call.wait(10)
        time.sleep(0.5)
        facts: Facts = {"lost_calls": len(calls)}
        if calls:
            at, deadline, error = calls[0]
            facts["margin_ms"] = ms(deadline - at)
            facts["waited_ms"] = ms(at - frozen)
            facts["lost_error"] = describe(error)
        facts["valid_after_lost"] = lease.valid
        self.beliefs.end("lease")  # never released: it is lost
        return facts

    def lost_answer(self) -> Facts:
        impatient = self.client(call_timeout=0.3)
        self.await_point("pause")
        start = time.monotonic()
        lease = impatient.acquire(self.resource, ttl=10, wait=0)
        elapsed = time.monotonic() - start
        self.beliefs.watch("lease", lease)
        facts: Facts = {"acquired": lease.valid, "elapsed_ms": ms(elapsed)}
        self.await_point("held")
        self.beliefs.end("lease")
        try:
            facts["released"] = lease.release()
        except LockServiceError as e:  # no answer within 300 ms: reported, the harness judges it
            facts["release_error"] = describe(e)
        return facts

    def invalid_argument(self) -> Facts:
        c = self.client()
        return {
            "empty_resource": self.error_of(lambda: c.acquire("", ttl=10, wait=0)),
            "zero_ttl": self.error_of(lambda: c.acquire(self.resource, ttl=0, wait=0)),
            "long_resource": self.error_of(lambda: c.acquire(self.resource + "x" * 600, ttl=10, wait=0)),
        }

    def concurrent_holders(self) -> Facts:
        clients = [self.client(), self.client()]
        sections: List[List[Any]] = []
        sections_lock = threading.Lock()
        failures: List[BaseException] = []

        def work(lease: Lease) -> None:
            start = time.monotonic()
            time.sleep(0.005)
            end = time.monotonic()
            with sections_lock:
                sections.append([ms(start - ORIGIN), ms(end - ORIGIN), str(lease.fencing_token)])

        def worker(client: LockClient) -> None:
            try:
                for _ in range(5):
                    client.with_lock(self.resource, 2, 20, work)
            except BaseException as e:  # reported below, after every worker is done
                failures.append(e)

        threads = [threading.Thread(target=worker, args=(clients[w % 2],), name=f"worker-{w}")
                   for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            raise failures[0]
        return {"sections": sections}

    def permits(self) -> Facts:
        """N + 3 workers, each with its own client over every replica, take one of N permits
        in turn for 4 s; each hold is reported as a ``permit`` event for the harness to check
        that no more than N overlap."""
        clients = [self.client() for _ in range(PERMIT_WORKERS)]
        acquired: List[int] = []
        errors: List[Facts] = []
        noted = threading.Lock()
        until = time.monotonic() + PERMITS_FOR

        def worker(i: int, client: LockClient) -> None:
            while time.monotonic() < until:
                try:
                    lease = client.acquire_permit(self.resource, PERMITS, ttl=2, wait=3)
                    start_ns = time.monotonic_ns()  # after the grant
                    lease.keep_alive()
                    time.sleep(random.uniform(0.05, 0.15))
                    end_ns = time.monotonic_ns()  # before the release
                    emit(permit_event(i, lease.permit, lease.fencing_token, start_ns, end_ns))
                    with noted:
                        acquired.append(lease.permit)
                    if not lease.release():
                        with noted:
                            errors.append(not_released(lease.permit))
                except Exception as e:  # noted; the worker goes on
                    with noted:
                        errors.append(error_fact(e))
                    time.sleep(0.05)  # not a hot loop of failures

        threads = [threading.Thread(target=worker, args=(i, c), name=f"permit-worker-{i}")
                   for i, c in enumerate(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return {"acquired": len(acquired), "permits_seen": sorted(set(acquired)), "errors": errors}

    def campaign_handover(self) -> Facts:
        a_client, b_client, c_client = self.client(), self.client(), self.client()
        a = a_client.campaign(self.resource, "a", ttl=2)
        self.beliefs.watch("leadership", a)
        a_lost: List[LeaseLost] = []
        a.on_lost(a_lost.append)
        self.await_point("leading")
        facts: Facts = {"term_a": str(a.term)}
        facts["c_error"] = self.error_of(lambda: c_client.campaign(self.resource, "c", ttl=2, wait=0.3))
        b_result: Dict[str, Any] = {}
        b_returned = threading.Event()

        def campaign_b() -> None:
            try:
                b_result["leadership"] = b_client.campaign(self.resource, "b", ttl=2)
            except BaseException as e:  # reported below
                b_result["error"] = e
            b_result["at"] = time.monotonic()
            b_returned.set()

        threading.Thread(target=campaign_b, name="candidate-b", daemon=True).start()
        time.sleep(1.5)  # A leads on only by its renewals now
        facts["b_led_early"] = b_returned.is_set()
        a.proclaim("a2")
        facts["leader_after_proclaim"] = leader_fact(a_client.leader(self.resource))
        self.beliefs.end("leadership")
        resign_at = time.monotonic()
        facts["resigned"] = a.resign()
        if not b_returned.wait(10):
            raise RuntimeError("B's campaign did not return within 10 s of A's resignation")
        if "error" in b_result:
            raise b_result["error"]
        b = b_result["leadership"]
        facts["handover_ms"] = ms(b_result["at"] - resign_at)
        facts["a_leader_after_resign"] = a.is_leader
        facts["a_lost"] = bool(a_lost)
        facts["term_b"] = str(b.term)
        facts["b_value"] = b.value
        facts["b_is_leader"] = b.is_leader
        facts["b_resigned"] = b.resign()
        facts["second_resign"] = b.resign()
        facts["leader_at_end"] = leader_fact(a_client.leader(self.resource))
        return facts

    def observe(self) -> Facts:
        first, second = self.client(), self.client()
        events: List[Any] = []
        changed = threading.Condition()

        def note(leader: Optional[Leader]) -> None:
            with changed:
                events.append(leader_fact(leader))
                changed.notify_all()

        observation = first.observe(self.resource, note)
        with changed:
            changed.wait_for(lambda: len(events) >= 1, 5)
        a = first.campaign(self.resource, "a", ttl=2)
        self.beliefs.watch("leadership", a)
        time.sleep(0.3)
        self.beliefs.end("leadership")
        a.resign()
        time.sleep(0.3)
        b = second.campaign(self.resource, "b", ttl=2)
        time.sleep(0.3)
        b.resign()
        with changed:
            changed.wait_for(lambda: len(events) >= 5 and events[-1] is None, 5)
        observation.close()
        with changed:
            at_close = len(events)
        time.sleep(0.3)
        with changed:
            late = len(events) - at_close
            seen = list(events[:at_close])
        return {"events": seen, "term_a": str(a.term), "term_b": str(b.term), "late_events": late}

    def extend_while_kept(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        lost: List[LeaseLost] = []
        lost_once = threading.Event()

        def on_lost(error: LeaseLost) -> None:
            lost.append(error)
            lost_once.set()

        lease.keep_alive().on_lost(on_lost)
        self.await_point("kept")
        lease.extend(6)  # through the stream (rule 15)
        self.await_point("longer")  # the harness freezes the server for 3 s, then thaws it
        facts: Facts = {"fencing_token": str(lease.fencing_token),
                        "valid_after_longer": lease.valid}
        time.sleep(0.5)
        lease.extend(1)  # shorter: the deadline is cut when the request goes out
        facts["remaining_after_shorter_ms"] = ms(lease.remaining)
        self.await_point("shorter")  # the server frozen for 2.5 s: longer than the 1 s ttl
        lost_once.wait(3)
        facts["lost_calls"] = len(lost)
        facts["valid_at_end"] = lease.valid
        self.beliefs.end("lease")
        facts["released"] = lease.release()
        return facts

    def replica_restart(self) -> Facts:
        client = self.client()
        lease = client.acquire(self.resource, ttl=3, wait=0)
        self.beliefs.watch("lease", lease)
        lease_lost: List[LeaseLost] = []
        lease.keep_alive().on_lost(lease_lost.append)
        leadership = client.campaign(self.resource, "a", ttl=3)
        self.beliefs.watch("leadership", leadership)
        leadership_lost: List[LeaseLost] = []
        leadership.on_lost(leadership_lost.append)
        facts: Facts = {"fencing_token": str(lease.fencing_token), "term": str(leadership.term)}
        self.await_point("kept")  # the harness restarts each replica in turn, twice
        facts.update({
            "fencing_token_after": str(lease.fencing_token),
            "term_after": str(leadership.term),
            "valid": lease.valid,
            "is_leader": leadership.is_leader,
            "lease_lost_calls": len(lease_lost),
            "leadership_lost_calls": len(leadership_lost),
        })
        self.beliefs.end("lease")
        facts["released"] = lease.release()
        self.beliefs.end("leadership")
        facts["resigned"] = leadership.resign()
        return facts

    def release_during_restart(self) -> Facts:
        """Unary calls right after a replica got SIGTERM: each must reach a replica that is up
        within its own deadline (they retry UNAVAILABLE until then). The client has no Describe
        of its own: it goes through the client's call path for idempotent unary calls."""
        client = self.client()
        extends: List[Any] = []
        describes: List[Any] = []
        releases: List[Any] = []
        for _ in range(RESTART_ROUNDS):
            lease = client.acquire(self.resource, ttl=10, wait=0)
            self.await_point("held")  # the harness sends SIGTERM to a replica, and answers at once
            extends.append(outcome_of(lambda: lease.extend(10) and "ok"))
            describes.append(outcome_of(lambda: bool(run_procedure(client._calls.unary(
                client._calls.lock_stub.Describe,
                lock_pb2.DescribeRequest(resource=self.resource)))[0].held)))
            releases.append(outcome_of(lease.release))
        return {"extends": extends, "describes": describes, "releases": releases}

    def shutdown_race(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=2, wait=0)
        self.beliefs.watch("lease", lease)
        lost: List[LeaseLost] = []
        lease.keep_alive().on_lost(lost.append)
        facts: Facts = {"fencing_token": str(lease.fencing_token)}
        self.await_point("held")  # the harness shuts replicas down under a waiting competitor
        facts.update({
            "fencing_token_after": str(lease.fencing_token),
            "valid": lease.valid,
            "lost_calls": len(lost),
        })
        self.beliefs.end("lease")
        facts["released"] = lease.release()
        return facts

    def lead(self) -> Facts:
        """lead(): A's work is told the moment A's leadership is lost (a majority frozen), before
        its deadline; B's work starts only after. Work polls ``leadership.lost`` (a thread
        cannot be interrupted)."""
        a_client, b_client = self.client(), self.client()
        a: Dict[str, Any] = {}
        b: Dict[str, Any] = {}
        a_started, a_ended, b_ended = threading.Event(), threading.Event(), threading.Event()

        def work_a(leadership: Leadership) -> None:
            a["start"], a["term"] = time.monotonic(), leadership.term
            self.beliefs.watch("leadership", leadership)
            a_started.set()
            leadership.lost.wait()
            a["cancel_at"], a["deadline"] = time.monotonic(), leadership.deadline
            self.beliefs.end("leadership")

        def work_b(leadership: Leadership) -> None:
            b["start"], b["term"] = time.monotonic(), leadership.term

        def run(client: LockClient, value: str, work: Callable[[Leadership], None],
                into: Dict[str, Any], ended: threading.Event) -> None:
            try:
                client.lead(self.resource, value, 2, work)
                into["result"] = "ok"
            except LockServiceError as e:
                into["result"] = describe(e)
            except BaseException as e:  # reported below, on the main thread
                into["crash"] = e
            ended.set()

        threading.Thread(target=run, args=(a_client, "a", work_a, a, a_ended), name="lead-a",
                         daemon=True).start()
        if not a_started.wait(10):
            raise RuntimeError("A's work did not start within 10 s")
        self.await_point("leading")
        threading.Thread(target=run, args=(b_client, "b", work_b, b, b_ended), name="lead-b",
                         daemon=True).start()
        time.sleep(0.3)
        b_early = "start" in b
        self.await_point("freeze")
        a_ended.wait(10)
        self.await_point("thaw")
        b_ended.wait(10)
        for side in (a, b):
            if "crash" in side:
                raise side["crash"]
        return {
            "term_a": str(a["term"]),
            "cancel_margin_ms": ms(a["deadline"] - a["cancel_at"]) if "cancel_at" in a else None,
            "a_error": a.get("result") if a.get("result") != "ok" else None,
            "b_early": b_early,
            "b_after_a_ms": (ms(b["start"] - a["cancel_at"])
                             if "start" in b and "cancel_at" in a else None),
            "term_b": str(b["term"]) if "term" in b else None,
            "b_result": b.get("result"),
        }

    def hold_many(self) -> Facts:
        """The rolling-restart run's load: many kept leases and leaderships on one client, no beliefs."""
        client = self.client()
        leases: List[Lease] = []
        fences: List[int] = []
        leases_lost: List[LeaseLost] = []
        losses = Losses()
        for i in range(self.count):
            lease = client.acquire(f"{self.resource}/{i}", ttl=self.hold_ttl, wait=10)
            lease.keep_alive().on_lost(leases_lost.append).on_lost(losses.record(f"lease {i}"))
            leases.append(lease)
            fences.append(lease.fencing_token)
        leaderships: List[Leadership] = [None] * self.elections  # type: ignore[list-item]
        failures: List[BaseException] = []

        def campaign(i: int) -> None:
            try:
                leaderships[i] = client.campaign(f"{self.resource}/e{i}", "python", ttl=self.hold_ttl)
            except BaseException as e:  # reported below, on the main thread
                failures.append(e)

        threads = [threading.Thread(target=campaign, args=(i,)) for i in range(self.elections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            raise failures[0]
        terms = [p.term for p in leaderships]
        leaderships_lost: List[LeaseLost] = []
        for i, p in enumerate(leaderships):
            p.on_lost(leaderships_lost.append)
            p.on_lost(losses.record(f"leadership {i}"))
        losses.held()
        self.await_point("held")  # the harness restarts every replica in turn, several times
        facts: Facts = {
            "leases": len(leases),
            "leases_valid": sum(1 for lease in leases if lease.valid),
            "leases_lost": len(leases_lost),
            "fencing_changed": sum(1 for lease, fence in zip(leases, fences) if lease.fencing_token != fence),
            "leaderships": len(leaderships),
            "leading": sum(1 for p in leaderships if p.is_leader),
            "leaderships_lost": len(leaderships_lost),
            "terms_changed": sum(1 for p, term in zip(leaderships, terms) if p.term != term),
            "losses": losses.facts(),
        }
        facts["released"] = sum(1 for lease in leases if lease.release())
        facts["resigned"] = sum(1 for p in leaderships if p.resign())
        return facts


SCENARIOS = {
    "acquire-contended": Runner.acquire_contended,
    "release-twice": Runner.release_twice,
    "extend": Runner.extend,
    "keep-alive": Runner.keep_alive,
    "majority-frozen": Runner.majority_frozen,
    "lost-answer": Runner.lost_answer,
    "invalid-argument": Runner.invalid_argument,
    "concurrent-holders": Runner.concurrent_holders,
    "campaign-handover": Runner.campaign_handover,
    "observe": Runner.observe,
    "extend-while-kept": Runner.extend_while_kept,
    "replica-restart": Runner.replica_restart,
    # Issue 40's faults are the harness's; the runner does what it does for replica-restart.
    "replica-silent": Runner.replica_restart,
    "replica-blackhole": Runner.replica_restart,
    "replica-minority": Runner.replica_restart,
    "rolling-restart-fast": Runner.replica_restart,
    "release-during-restart": Runner.release_during_restart,
    "shutdown-race": Runner.shutdown_race,
    "lead": Runner.lead,
    "permits": Runner.permits,
    "hold-many": Runner.hold_many,
}


def parse_args(description: str, scenarios: Dict[str, Any]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--server", required=True,
                        help="HOST:PORT of redlockd, or several, comma-separated (one per replica)")
    parser.add_argument("--scenario", required=True, choices=sorted(scenarios))
    parser.add_argument("--resource", required=True)
    parser.add_argument("--count", type=int, default=0, help="hold-many: how many leases")
    parser.add_argument("--elections", type=int, default=0, help="hold-many: how many leaderships")
    parser.add_argument("--ttl-ms", type=int, default=10_000,
                        help="hold-many: the ttl of every lease and leadership, in milliseconds")
    return parser.parse_args()


def servers_of(args: argparse.Namespace) -> List[str]:
    return [a.strip() for a in args.server.split(",") if a.strip()]


def failed(scenario: str, e: BaseException) -> int:
    """The error's string form never holds a token."""
    print(f"scenario {scenario} failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    traceback.print_exc()
    return 1


def log_if_asked() -> None:
    """The client's own log on standard error when REDLOCKD_RUNNER_LOG=debug (the rolling-restart
    run keeps each runner's output: a loss's story is in its stream ends and reopens)."""
    if os.environ.get("REDLOCKD_RUNNER_LOG") == "debug":
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                            format="%(relativeCreated)d ms %(name)s %(message)s")


def main() -> int:
    log_if_asked()
    args = parse_args(__doc__.splitlines()[0], SCENARIOS)
    runner = Runner(servers_of(args), args.resource)
    runner.count = args.count
    runner.hold_ttl = args.ttl_ms / 1000
    runner.elections = args.elections
    try:
        facts = SCENARIOS[args.scenario](runner)
    except Exception as e:
        return failed(args.scenario, e)
    finally:
        runner.close()
    emit({"event": "result", "scenario": args.scenario, **facts})
    return 0


if __name__ == "__main__":
    sys.exit(main())
