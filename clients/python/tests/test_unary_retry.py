"""Idempotent unary calls retry UNAVAILABLE until their own deadline, not for a fixed number of
attempts (issue 40): a replica that restarts, or a channel whose connections to the replicas
still up are in their reconnect backoff ("connections to all backends failing"), refuses for
longer than four quick attempts. The fire-and-forget give-back goes through the same retries.
Sync client and redlockd.aio."""
import asyncio
import threading
import time
import unittest

import grpc

from fakeserver import FAST_RETRY, FakeServerCase
from redlockd.aio import AsyncLockClient
from redlockd._proto import election_pb2
from test_aio import AioCase

#: More refusals than FAST_RETRY's 4 attempts, far fewer than its backoff fits in a call timeout.
REFUSALS = 8


def refused_then(answer, refusals=REFUSALS):
    """A script that refuses the first ``refusals`` calls as a channel with no replica reachable
    does, then answers with ``answer(request, context, n)``."""
    def script(request, context, n):
        if n <= refusals:
            context.abort(grpc.StatusCode.UNAVAILABLE,
                          "failed to connect to all addresses; last error: Connection refused")
        return answer(request, context, n)
    return script


#: The call timeout of the silent-replica tests: each attempt gets half of it.
CALL_TIMEOUT = 1.0


def silent_first(answer):
    """A script whose first call is never answered, as a replica gone silent does (it ends when
    the caller's deadline does), and whose later calls get ``answer(request, context, n)``."""
    def script(request, context, n):
        if n == 1:
            while context.is_active():
                time.sleep(0.01)
            return None
        return answer(request, context, n)
    return script


class SyncUnaryRetryTest(FakeServerCase, unittest.TestCase):
    def test_an_attempt_a_silent_replica_never_answers_is_retried_within_the_call_timeout(self):
        client = self.make_client(call_timeout=CALL_TIMEOUT)
        lease = client.acquire("orders/1", ttl=10)
        self.fake.on_release = silent_first(self.fake.release_once)
        began = time.monotonic()
        self.assertTrue(lease.release())
        self.assertLess(time.monotonic() - began, CALL_TIMEOUT)
        self.assertEqual(len(self.fake.releases), 2)
        self.assertEqual({r.token for r in self.fake.releases}, {self.fake.acquires[0][0].token})

    def test_a_release_refused_longer_than_the_policy_attempts_still_releases(self):
        lease = self.client.acquire("orders/1", ttl=10)
        self.fake.on_release = refused_then(self.fake.release_once)
        self.assertTrue(lease.release())
        self.assertEqual(len(self.fake.releases), REFUSALS + 1)
        self.assertEqual({r.token for r in self.fake.releases}, {self.fake.acquires[0][0].token})

    def test_leader_is_retried_the_same_way(self):
        self.elections.on_leader = refused_then(lambda request, context, n: election_pb2.LeaderResponse(
            leader=election_pb2.Leadership(value="a", term=4)))
        leader = self.client.leader("scheduler")
        self.assertEqual((leader.value, leader.term), ("a", 4))
        self.assertEqual(len(self.elections.leader_calls), REFUSALS + 1)

    def test_a_lost_lease_is_given_back_through_the_retries(self):
        self.fake.on_acquire = lambda request, context, n: self.fake.grant(request, context, n, validity=0.3)
        self.fake.on_release = refused_then(self.fake.release_once, refusals=3)
        lease = self.client.acquire("orders/1", ttl=0.3)
        lost = threading.Event()
        lease.on_lost(lambda error: lost.set())
        self.assertTrue(lost.wait(5))  # ran out: given back, fire and forget
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.releases) == 4))
        self.assertEqual({r.token for r in self.fake.releases}, {self.fake.acquires[0][0].token})


class AsyncUnaryRetryTest(AioCase):
    async def test_an_attempt_a_silent_replica_never_answers_is_retried_within_the_call_timeout(self):
        client = AsyncLockClient(self.channel, retry=FAST_RETRY, call_timeout=CALL_TIMEOUT)
        lease = await client.acquire("orders/1", ttl=10)
        self.fake.on_release = silent_first(self.fake.release_once)
        began = time.monotonic()
        self.assertTrue(await lease.release())
        self.assertLess(time.monotonic() - began, CALL_TIMEOUT)
        self.assertEqual(len(self.fake.releases), 2)

    async def test_a_release_refused_longer_than_the_policy_attempts_still_releases(self):
        lease = await self.client.acquire("orders/1", ttl=10)
        self.fake.on_release = refused_then(self.fake.release_once)
        self.assertTrue(await lease.release())
        self.assertEqual(len(self.fake.releases), REFUSALS + 1)

    async def test_a_lost_lease_is_given_back_through_the_retries(self):
        self.fake.on_acquire = lambda request, context, n: self.fake.grant(request, context, n, validity=0.3)
        self.fake.on_release = refused_then(self.fake.release_once, refusals=3)
        lease = await self.client.acquire("orders/1", ttl=0.3)
        await asyncio.wait_for(lease.lost.wait(), 5)
        self.assertTrue(await asyncio.to_thread(
            self.fake.wait_for, lambda: len(self.fake.releases) == 4))


if __name__ == "__main__":
    unittest.main()
