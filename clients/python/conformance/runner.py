#!/usr/bin/env python3
"""The Python client's conformance runner: performs one scenario of clients/conformance/README.md
with redlockd.LockClient and prints what it saw, one JSON object per line. The harness decides
whether that conforms; this program only reports.

    runner.py --server HOST:PORT --scenario NAME --resource R
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import grpc

from redlockd import Leader, LeaseLost, LockClient, LockServiceError

ORIGIN = time.monotonic()

Facts = Dict[str, Any]


def emit(event: Facts) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def ms(seconds: float) -> float:
    return seconds * 1000.0


def describe(error: LockServiceError) -> Facts:
    return {"type": type(error).__name__, "code": error.code.name, "message": str(error)}


def leader_fact(leader: Optional[Leader]) -> Any:
    """``null`` for no leader, else ``[value, "term"]`` (the term as a decimal string)."""
    return None if leader is None else [leader.value, str(leader.term)]


class Runner:
    def __init__(self, server: str, resource: str) -> None:
        self.server = server
        self.resource = resource
        self.channels: List[grpc.Channel] = []

    def client(self, call_timeout: float = 5.0) -> LockClient:
        """A client with the defaults, on a channel of its own."""
        channel = grpc.insecure_channel(self.server)
        self.channels.append(channel)
        return LockClient(channel, call_timeout=call_timeout)

    def close(self) -> None:
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
        facts["released"] = lease.release()
        return facts

    def release_twice(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=10, wait=0)
        self.await_point("held")
        first = lease.release()
        second = lease.release()
        return {"first_release": first, "second_release": second, "valid_after": lease.valid}

    def extend(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=2, wait=0)
        time.sleep(0.5)
        lease.extend(3)
        facts: Facts = {"remaining_after_extend_ms": ms(lease.remaining)}
        self.await_point("extended")
        time.sleep(2.0)
        facts["valid_after_first_ttl"] = lease.valid
        facts["released"] = lease.release()
        return facts

    def keep_alive(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=1, wait=0)
        lost: List[LeaseLost] = []
        lease.keep_alive().on_lost(lost.append)
        time.sleep(1.5)
        self.await_point("kept")
        time.sleep(1.5)
        facts = {"valid_at_end": lease.valid, "lost": bool(lost)}
        facts["released"] = lease.release()
        return facts

    def majority_frozen(self) -> Facts:
        lease = self.client().acquire(self.resource, ttl=2, wait=0)
        calls: List[tuple] = []
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
        return facts

    def lost_answer(self) -> Facts:
        impatient = self.client(call_timeout=0.3)
        self.await_point("pause")
        start = time.monotonic()
        lease = impatient.acquire(self.resource, ttl=10, wait=0)
        elapsed = time.monotonic() - start
        facts: Facts = {"acquired": lease.valid, "elapsed_ms": ms(elapsed)}
        self.await_point("held")
        facts["released"] = lease.release()
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
        sections: List[list] = []
        sections_lock = threading.Lock()
        failures: List[BaseException] = []

        def work(lease) -> None:
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

    def campaign_handover(self) -> Facts:
        a_client, b_client, c_client = self.client(), self.client(), self.client()
        a = a_client.campaign(self.resource, "a", ttl=2)
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
        resign_at = time.monotonic()
        facts["resigned"] = a.resign()
        if not b_returned.wait(10):
            raise RuntimeError("B's campaign did not return within 10 s of A's resignation")
        if "error" in b_result:
            raise b_result["error"]
        b = b_result["leadership"]
        facts["handover_ms"] = ms(b_result["at"] - resign_at)
        facts["a_leader_after_resign"] = a.is_leader()
        facts["a_lost"] = bool(a_lost)
        facts["term_b"] = str(b.term)
        facts["b_value"] = b.value
        facts["b_is_leader"] = b.is_leader()
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
        time.sleep(0.3)
        a.resign()
        time.sleep(0.3)
        b = second.campaign(self.resource, "b", ttl=2)
        time.sleep(0.3)
        b.resign()
        with changed:
            changed.wait_for(lambda: len(events) >= 5, 5)
        observation.close()
        with changed:
            at_close = len(events)
        time.sleep(0.3)
        with changed:
            late = len(events) - at_close
            seen = list(events[:at_close])
        return {"events": seen, "term_a": str(a.term), "term_b": str(b.term), "late_events": late}


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
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="HOST:PORT of redlockd")
    parser.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    parser.add_argument("--resource", required=True)
    args = parser.parse_args()
    runner = Runner(args.server, args.resource)
    try:
        facts = SCENARIOS[args.scenario](runner)
    except Exception as e:  # the error's string form never holds a token
        print(f"scenario {args.scenario} failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        runner.close()
    emit({"event": "result", "scenario": args.scenario, **facts})
    return 0


if __name__ == "__main__":
    sys.exit(main())
