"""Rule 17: the server's early refusal (UNAVAILABLE with ``grpc-retry-pushback-ms``) is waited
out, at least the pushback and with jitter, by unary retries and by stream reopens, in the sync
client and in redlockd.aio; "do not retry" stops at once; a kept lease is still lost at its
guarded deadline while it waits."""
import asyncio
import threading
import time
import unittest

import grpc

from fakeserver import FakeServerCase, Replica, campaign_answer
from redlockd import LeaseLost, LockServiceError, RetryPolicy
from redlockd._proto import election_pb2
from redlockd._pushback import DO_NOT_RETRY, jittered, parse
from redlockd.aio import AsyncLockClient
from test_resume import LossRecorder, Streams, answer, eventually

#: The client's own backoff (10 ms doubling to 40 ms), far below the pushbacks used here.
RETRY = RetryPolicy(max_attempts=5, initial_backoff=0.01, max_backoff=0.04)


def refuse(context, pushback):
    """Ends the call the way a swamped server does: UNAVAILABLE, with the pushback trailer."""
    context.set_trailing_metadata((("grpc-retry-pushback-ms", pushback),))
    context.abort(grpc.StatusCode.UNAVAILABLE, "refused early: too many at once")


def gaps(times):
    return [b - a for a, b in zip(times, times[1:])]


class Arrivals:
    """The time each call or stream arrived at the fake, and the first request of each."""

    def __init__(self):
        self.lock = threading.Lock()
        self.times = []
        self.firsts = []

    def note(self, first=None):
        with self.lock:
            self.times.append(time.monotonic())
            self.firsts.append(first)
            return len(self.times)

    def before(self, moment):
        with self.lock:
            return [t for t in self.times if t < moment]


class Checks:
    def assert_waited_with_jitter(self, times, count, pushback):
        waits = gaps(times)
        self.assertEqual(len(waits), count)
        for wait in waits:  # the client's wait plus a little transport time
            self.assertGreaterEqual(wait, pushback)
        self.assertGreater(len(set(waits)), 1, "jittered waits, not all equal")


class ParseTest(unittest.TestCase):
    def test_values(self):
        self.assertEqual(parse("150"), 0.15)
        self.assertEqual(parse(b"0"), 0.0)
        for bad in ("-1", "", "1.5", "soon", "1e3", "-0", "9" * 30):
            self.assertEqual(parse(bad), DO_NOT_RETRY, bad)

    def test_jitter_is_between_the_pushback_and_half_as_much_again(self):
        waits = [jittered(0.2) for _ in range(200)]
        self.assertTrue(all(0.2 <= w <= 0.3 for w in waits))
        self.assertGreater(len(set(waits)), 100)


class SyncPushbackTest(FakeServerCase, Checks, unittest.TestCase):
    def make_client(self, channel=None, **options):
        options.setdefault("retry", RETRY)
        return super().make_client(channel, **options)

    def refusing_acquires(self, count, pushback):
        def script(request, context, n):
            if n <= count:
                refuse(context, pushback)
            return self.fake.grant(request, context, n)
        self.fake.on_acquire = script

    def test_an_acquire_waits_at_least_the_pushback_with_jitter_and_keeps_its_token(self):
        self.refusing_acquires(3, "150")
        lease = self.client.acquire("orders/1", ttl=10, wait=5)
        self.assert_waited_with_jitter([t for _, t in self.fake.acquires], 3, 0.15)
        self.assertEqual(len({r.token for r, _ in self.fake.acquires}), 1)
        # The waits came out of the Acquire's wait: the last try sent what was left of it.
        self.assertLess(self.fake.acquires[-1][0].wait.ToNanoseconds() / 1e9, 5 - 0.45)
        self.assertTrue(lease.valid)

    def test_do_not_retry_ends_an_acquire_at_once_and_gives_the_token_back(self):
        self.refusing_acquires(5, "-1")
        with self.assertRaises(LockServiceError) as caught:
            self.client.acquire("orders/1", ttl=10, wait=5)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(len(self.fake.acquires), 1)
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.releases) == 1))
        self.assertEqual(self.fake.releases[0].token, self.fake.acquires[0][0].token)

    def test_a_unary_call_waits_at_least_the_pushback(self):
        arrivals = Arrivals()

        def script(request, context, n):
            arrivals.note()
            if n <= 2:
                refuse(context, "120")
            return self.fake.extend_ok(request, context, n)
        self.fake.on_extend = script
        lease = self.client.acquire("orders/1", ttl=10)
        lease.extend(20)
        self.assert_waited_with_jitter(arrivals.times, 2, 0.12)

    def test_an_unparsable_pushback_is_do_not_retry(self):
        def script(request, context, n):
            refuse(context, "soon")
        self.fake.on_release = script
        lease = self.client.acquire("orders/1", ttl=10)
        with self.assertRaises(LockServiceError) as caught:
            lease.release()
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(len(self.fake.releases), 1)

    def refusing_keep_alives(self, count, pushback, arrivals):
        def script(requests, context):
            first = next(requests)
            n = arrivals.note(first)
            if n <= count:
                refuse(context, pushback)
            yield answer(first, 0.99 * first.ttl.ToNanoseconds() / 1e9)
            for request in requests:
                yield answer(request, 0.99 * request.ttl.ToNanoseconds() / 1e9)
        self.fake.on_keep_alive = script

    def test_a_kept_stream_reopens_after_the_pushback_with_the_same_token_and_no_loss(self):
        arrivals = Arrivals()
        self.refusing_keep_alives(3, "150", arrivals)
        lease = self.client.acquire("orders/1", ttl=3)
        token = self.fake.acquires[0][0].token
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 10))
        self.assert_waited_with_jitter(arrivals.times, 3, 0.15)
        self.assertEqual({f.token for f in arrivals.firsts}, {token})
        self.assertTrue(lease.valid)
        self.assertEqual(lost.calls, [])
        self.assertTrue(lease.release())

    def test_a_kept_lease_whose_guarded_deadline_passes_during_a_pushback_is_lost(self):
        arrivals = Arrivals()
        self.refusing_keep_alives(100, "5000", arrivals)
        lease = self.client.acquire("orders/1", ttl=0.8)
        deadline = lease.deadline
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(lost.fired.wait(10))
        at, error = lost.calls[0]
        # At the guarded deadline (the loss timer's own lateness aside), not after the pushback.
        self.assertLess(at, deadline + 1.0)
        self.assertEqual(error.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertFalse(lease.valid)
        self.assertEqual(len(arrivals.before(at)), 1, "waiting the pushback, not reopening")
        self.assertEqual(len(lost.calls), 1)

    def test_do_not_retry_on_a_kept_stream_is_a_loss_with_unavailable(self):
        arrivals = Arrivals()
        self.refusing_keep_alives(1, "-1", arrivals)
        lease = self.client.acquire("orders/1", ttl=10)
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(lost.fired.wait(10))
        self.assertIsInstance(lost.calls[0][1], LeaseLost)
        self.assertEqual(lost.calls[0][1].code, grpc.StatusCode.UNAVAILABLE)
        self.assertFalse(lease.valid)
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.releases) == 1))  # given back
        self.assertEqual(len(arrivals.times), 1)

    def test_a_campaign_refused_with_a_pushback_campaigns_again_after_it_with_the_same_token(self):
        arrivals = Arrivals()

        def script(requests, context):
            first = next(requests)
            if arrivals.note(first) <= 2:
                refuse(context, "150")
            yield campaign_answer(first, 7)
            for request in requests:
                yield campaign_answer(request, 7)
        self.elections.on_campaign = script
        leadership = self.client.campaign("jobs", "a", ttl=3)
        self.assertEqual(leadership.term, 7)
        self.assert_waited_with_jitter(arrivals.times, 2, 0.15)
        self.assertEqual(len({f.token for f in arrivals.firsts}), 1)
        self.assertTrue(leadership.resign())

    def test_an_observe_reopen_waits_at_least_the_pushback(self):
        def script(request, context, n):
            if n <= 2:
                refuse(context, "150")
            yield election_pb2.ObserveResponse()
            while context.is_active():
                time.sleep(0.01)
        self.elections.on_observe = script
        seen = []
        observation = self.client.observe("scheduler", seen.append)
        try:
            self.assertTrue(eventually(lambda: len(seen) == 1))
            self.assert_waited_with_jitter([t for _, t in self.elections.observe_calls], 2, 0.15)
        finally:
            observation.close()


class AsyncPushbackTest(unittest.IsolatedAsyncioTestCase, Checks):
    async def asyncSetUp(self):
        self.replica = Replica()
        self.fake = self.replica.fake
        self.elections = self.replica.elections
        self.channel = grpc.aio.insecure_channel(self.replica.target)
        await asyncio.wait_for(self.channel.channel_ready(), 5)
        self.client = AsyncLockClient(self.channel, retry=RETRY)

    async def asyncTearDown(self):
        await self.channel.close()
        self.replica.server.stop(None)

    async def test_an_acquire_waits_at_least_the_pushback_with_jitter_and_keeps_its_token(self):
        def script(request, context, n):
            if n <= 3:
                refuse(context, "150")
            return self.fake.grant(request, context, n)
        self.fake.on_acquire = script
        lease = await self.client.acquire("orders/1", ttl=10, wait=5)
        self.assert_waited_with_jitter([t for _, t in self.fake.acquires], 3, 0.15)
        self.assertEqual(len({r.token for r, _ in self.fake.acquires}), 1)
        self.assertTrue(lease.valid)
        await lease.release()

    async def test_do_not_retry_ends_an_acquire_at_once(self):
        self.fake.on_acquire = lambda request, context, n: refuse(context, "-1")
        with self.assertRaises(LockServiceError) as caught:
            await self.client.acquire("orders/1", ttl=10, wait=5)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(len(self.fake.acquires), 1)

    async def test_a_kept_stream_reopens_after_the_pushback_and_a_long_one_is_a_loss(self):
        arrivals = Arrivals()

        def script(requests, context):
            first = next(requests)
            n = arrivals.note(first)
            if n <= 2:
                refuse(context, "150")
            if n >= 4:  # the third stream is ended as by a replica going away, then refused long
                refuse(context, "5000")
            yield answer(first, 0.99 * first.ttl.ToNanoseconds() / 1e9)
            for request in requests:
                yield answer(request, 0.99 * request.ttl.ToNanoseconds() / 1e9)
                context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")
        self.fake.on_keep_alive = script
        lease = await self.client.acquire("orders/1", ttl=1)
        token = self.fake.acquires[0][0].token
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(await asyncio.to_thread(eventually, lambda: len(arrivals.times) >= 4))
        self.assert_waited_with_jitter(arrivals.times[:3], 2, 0.15)
        self.assertEqual({f.token for f in arrivals.firsts}, {token})
        self.assertTrue(await asyncio.to_thread(lost.fired.wait, 10))
        at, error = lost.calls[0]
        self.assertEqual(error.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertFalse(lease.valid)
        self.assertEqual(len(arrivals.before(at)), 4, "waiting the pushback, not reopening")

    async def test_do_not_retry_on_a_kept_stream_is_a_loss_with_unavailable(self):
        def script(requests, context):
            next(requests)
            refuse(context, "-1")
            yield  # a generator, as the service's streams are
        self.fake.on_keep_alive = script
        lease = await self.client.acquire("orders/1", ttl=10)
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(await asyncio.to_thread(lost.fired.wait, 10))
        self.assertEqual(lost.calls[0][1].code, grpc.StatusCode.UNAVAILABLE)
        self.assertTrue(await asyncio.to_thread(
            self.fake.wait_for, lambda: len(self.fake.releases) == 1))

    async def test_an_observe_reopen_waits_at_least_the_pushback(self):
        def script(request, context, n):
            if n <= 2:
                refuse(context, "150")
            yield election_pb2.ObserveResponse()
            while context.is_active():
                time.sleep(0.01)
        self.elections.on_observe = script
        seen = []
        observation = self.client.observe("scheduler", seen.append)
        try:
            self.assertTrue(await asyncio.to_thread(eventually, lambda: len(seen) == 1))
            self.assert_waited_with_jitter([t for _, t in self.elections.observe_calls], 2, 0.15)
        finally:
            observation.close()


if __name__ == "__main__":
    unittest.main()
