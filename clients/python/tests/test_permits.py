"""Permits of a semaphore (acquire_permit, with_permit), sync and asyncio: the permit travels in
every request of its lease, a retry keeps the token, a given-up acquire gives back what it may
hold, and no string form shows the token."""
import asyncio
import threading
import unittest

import grpc

from fakeserver import FAST_RETRY, FakeServerCase, ManualClock, Replica, lease_message
from redlockd import LeaseLost, RetryPolicy, LockServiceError
from redlockd._proto import lock_pb2
from redlockd.aio import AsyncLockClient


def unavailable(request, context, n):
    context.abort(grpc.StatusCode.UNAVAILABLE, "only 2 of 5 Redis nodes answered")


class AcquirePermitTest(FakeServerCase, unittest.TestCase):
    def test_the_permit_travels_in_every_request_of_the_lease(self):
        self.fake.on_acquire = lambda request, context, n: self.fake.grant(request, context, n, permit=2)
        lease = self.client.acquire_permit("jobs", 3, ttl=10, wait=1)
        acquire = self.fake.acquires[0][0]
        self.assertEqual(acquire.permits, 3)
        self.assertEqual(lease.permit, 2)
        self.assertEqual(lease.resource, "jobs")
        lease.extend(5)  # not kept: a unary Extend
        lease.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) >= 2))
        lease.extend(6)  # kept: through the stream
        lease.release()  # the half-close: no Release call
        self.fake.on_acquire = self.fake.grant  # permit N = 3
        lease2 = self.client.acquire_permit("jobs", 3, ttl=10)
        self.assertTrue(lease2.release())  # not kept: a Release call
        self.assertEqual([e.permit for e in self.fake.extends], [2])
        self.assertEqual({r.permit for r, _ in self.fake.keep_alive_requests}, {2})
        self.assertEqual([(r.token, r.permit) for r in self.fake.releases],
                         [(self.fake.acquires[1][0].token, 3)])

    def test_a_lock_sends_no_permits_and_has_permit_zero(self):
        lease = self.client.acquire("jobs", ttl=10)
        self.assertEqual(self.fake.acquires[0][0].permits, 0)
        self.assertEqual(lease.permit, 0)
        lease.release()
        self.assertEqual(self.fake.releases[0].permit, 0)

    def test_a_retry_keeps_the_token_and_the_permits(self):
        def once_unavailable(request, context, n):
            if n == 1:
                unavailable(request, context, n)
            return self.fake.grant(request, context, n, permit=1)

        self.fake.on_acquire = once_unavailable
        lease = self.client.acquire_permit("jobs", 4, ttl=10, wait=2)
        (first, _), (second, _) = self.fake.acquires
        self.assertEqual(first.token, second.token)
        self.assertEqual((first.permits, second.permits), (4, 4))
        self.assertEqual(lease.permit, 1)

    def test_given_up_before_any_answer_gives_back_every_permit(self):
        self.fake.on_acquire = unavailable
        client = self.make_client(call_timeout=0.2,
                                  retry=RetryPolicy(max_attempts=2, initial_backoff=0.01, max_backoff=0.01))
        with self.assertRaises(LockServiceError) as caught:
            client.acquire_permit("jobs", 3, ttl=10)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        token = self.fake.acquires[0][0].token
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.releases) >= 3))
        self.assertEqual(sorted((r.resource, r.token, r.permit) for r in self.fake.releases),
                         [("jobs", token, 1), ("jobs", token, 2), ("jobs", token, 3)])

    def test_given_up_after_an_answer_named_the_permit_gives_back_that_one(self):
        def late_then_unavailable(request, context, n):
            if n == 1:
                threading.Event().wait(0.3)  # 0.3 of a 0.5 s validity gone: asked again
                return self.fake.grant(request, context, n, validity=0.5, permit=2)
            unavailable(request, context, n)

        self.fake.on_acquire = late_then_unavailable
        with self.assertRaises(LockServiceError):
            self.make_client(call_timeout=0.5).acquire_permit("jobs", 3, ttl=0.5)
        self.assertTrue(self.fake.wait_for(lambda: self.fake.releases))
        threading.Event().wait(0.2)  # no other Release follows
        self.assertEqual([r.permit for r in self.fake.releases], [2])

    def test_try_acquire_permit_is_none_when_every_permit_is_held(self):
        def all_held(request, context, n):
            context.abort(grpc.StatusCode.ABORTED, "semaphore 'jobs': no free permit of 3")

        self.fake.on_acquire = all_held
        self.assertIsNone(self.client.try_acquire_permit("jobs", 3, ttl=10))
        request = self.fake.acquires[0][0]
        self.assertEqual((request.permits, request.wait.seconds, request.wait.nanos), (3, 0, 0))

    def test_permits_must_be_a_positive_int(self):
        for bad in (0, -1, True, 2.0, "3"):
            with self.assertRaises(ValueError):
                self.client.acquire_permit("jobs", bad, ttl=10)  # type: ignore[arg-type]
        self.assertEqual(self.fake.acquires, [])

    def test_the_string_form_names_the_permit_never_the_token(self):
        self.fake.on_acquire = lambda request, context, n: self.fake.grant(request, context, n, permit=2)
        # On a clock that stands still: the form names the time remaining, which the system
        # clock moves by a millisecond between two readings now and then.
        lease = self.make_client(_clock=ManualClock()).acquire_permit("jobs", 3, ttl=10)
        token = self.fake.acquires[0][0].token
        self.assertIn("resource='jobs', permit=2, fencing_token=100", repr(lease))
        self.assertEqual(str(lease), repr(lease))
        self.assertNotIn(token, repr(lease))
        lease.release()
        self.assertNotIn(token, repr(lease))
        self.fake.on_acquire = self.fake.grant
        self.assertNotIn("permit", repr(self.client.acquire("jobs", ttl=10)))

    def test_a_loss_names_the_permit(self):
        def not_found(request, context, n):
            context.abort(grpc.StatusCode.NOT_FOUND, "not held")

        self.fake.on_extend = not_found
        self.fake.on_acquire = lambda request, context, n: self.fake.grant(request, context, n, permit=3)
        lease = self.client.acquire_permit("jobs", 3, ttl=10)
        with self.assertRaises(LeaseLost):
            lease.extend(5)
        self.assertEqual(lease.lost_error.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(self.fake.extends[0].permit, 3)
        lease.release()
        with self.assertRaises(LeaseLost) as caught:
            lease.extend(5)
        self.assertIn("lease on permit 3 of resource 'jobs' was released", str(caught.exception))


class WithPermitTest(FakeServerCase, unittest.TestCase):
    def test_the_block_holds_a_kept_permit_released_after(self):
        with self.client.with_permit("jobs", 2, ttl=10, wait=1) as lease:
            self.assertTrue(lease.valid)
            self.assertEqual(lease.permit, 2)
            self.assertTrue(self.fake.wait_for(lambda: self.fake.keep_alive_requests))
        self.assertFalse(lease.valid)
        self.assertEqual(self.fake.acquires[0][0].permits, 2)
        self.assertEqual(self.fake.keep_alive_requests[0][0].permit, 2)
        self.assertEqual(self.fake.releases, [])  # released by half-closing the stream

    def test_a_loss_is_raised_when_the_block_ends(self):
        def lose_after_first_answer(requests, context):
            request = next(requests)
            yield lock_pb2.KeepAliveResponse(
                lease=lease_message(request.resource, request.token, 10, permit=request.permit),
                sequence=request.sequence)
            context.abort(grpc.StatusCode.NOT_FOUND, "permit taken over")

        self.fake.on_keep_alive = lose_after_first_answer
        with self.assertRaises(LeaseLost) as caught:
            with self.client.with_permit("jobs", 2, ttl=10) as lease:
                self.assertTrue(lease.lost_error is not None or self._wait_lost(lease))
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_with_a_function_as_with_lock(self):
        self.assertEqual(self.client.with_permit("jobs", 5, 10, 1, lambda lease: lease.permit * 10), 50)
        with self.assertRaises(KeyError):
            self.client.with_permit("jobs", 5, 10, 1, lambda lease: {}["boom"])

    @staticmethod
    def _wait_lost(lease):
        lost = threading.Event()
        lease.on_lost(lambda error: lost.set())
        return lost.wait(5)


class AsyncPermitTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.replica = Replica()
        self.fake = self.replica.fake
        self.channel = grpc.aio.insecure_channel(self.replica.target)
        await asyncio.wait_for(self.channel.channel_ready(), 5)
        self.client = AsyncLockClient(self.channel, retry=FAST_RETRY)

    async def asyncTearDown(self):
        await self.channel.close()
        self.replica.server.stop(None)

    async def wait_for(self, predicate, timeout=5.0):
        return await asyncio.to_thread(self.fake.wait_for, predicate, timeout)

    async def test_the_permit_travels_in_every_request_of_the_lease(self):
        self.fake.on_acquire = lambda request, context, n: self.fake.grant(request, context, n, permit=2)
        lease = await self.client.acquire_permit("jobs", 3, ttl=10, wait=1)
        self.assertEqual(self.fake.acquires[0][0].permits, 3)
        self.assertEqual(lease.permit, 2)
        self.assertIn("permit=2", repr(lease))
        self.assertNotIn(self.fake.acquires[0][0].token, repr(lease))
        await lease.extend(5)
        lease.keep_alive()
        self.assertTrue(await self.wait_for(lambda: self.fake.keep_alive_requests))
        await lease.extend(6)
        self.assertTrue(await lease.release())
        async with self.client.acquire_permit("jobs", 3, ttl=10) as other:
            self.assertEqual(other.permit, 2)
        self.assertEqual([e.permit for e in self.fake.extends], [2])
        self.assertEqual({r.permit for r, _ in self.fake.keep_alive_requests}, {2})
        self.assertEqual([r.permit for r in self.fake.releases], [2])

    async def test_a_retry_keeps_the_token_and_giving_up_gives_back_every_permit(self):
        def once_unavailable(request, context, n):
            if n == 1:
                unavailable(request, context, n)
            return self.fake.grant(request, context, n, permit=1)

        self.fake.on_acquire = once_unavailable
        lease = await self.client.acquire_permit("jobs", 4, ttl=10)
        (first, _), (second, _) = self.fake.acquires
        self.assertEqual((first.token, first.permits), (second.token, second.permits))
        self.assertEqual(lease.permit, 1)

        self.fake.on_acquire = unavailable
        with self.assertRaises(LockServiceError):  # retried for its call timeout, then given up
            await AsyncLockClient(self.channel, retry=FAST_RETRY, call_timeout=0.3).acquire_permit(
                "jobs", 2, ttl=10)
        token = self.fake.acquires[-1][0].token
        self.assertTrue(await self.wait_for(lambda: len(self.fake.releases) >= 2))
        self.assertEqual(sorted((r.token, r.permit) for r in self.fake.releases), [(token, 1), (token, 2)])

    async def test_with_permit_as_a_block_and_with_a_function(self):
        async with self.client.with_permit("jobs", 2, ttl=10, wait=1) as lease:
            self.assertEqual(lease.permit, 2)
            self.assertTrue(await self.wait_for(lambda: self.fake.keep_alive_requests))
        self.assertFalse(lease.valid)
        self.assertEqual(self.fake.keep_alive_requests[0][0].permit, 2)

        async def work(held):
            return held.permit * 10

        self.assertEqual(await self.client.with_permit("jobs", 7, 10, 1, work), 70)
        self.fake.on_acquire = lambda request, context, n: context.abort(grpc.StatusCode.ABORTED, "all held")
        self.assertIsNone(await self.client.try_acquire_permit("jobs", 7, ttl=10))
        with self.assertRaises(ValueError):
            await self.client.acquire_permit("jobs", 0, ttl=10)

    async def test_with_permit_raises_the_loss_when_the_block_ends(self):
        def lose_after_first_answer(requests, context):
            request = next(requests)
            yield lock_pb2.KeepAliveResponse(
                lease=lease_message(request.resource, request.token, 10, permit=request.permit),
                sequence=request.sequence)
            context.abort(grpc.StatusCode.NOT_FOUND, "permit taken over")

        self.fake.on_keep_alive = lose_after_first_answer
        with self.assertRaises(LeaseLost) as caught:
            async with self.client.with_permit("jobs", 2, ttl=10) as lease:
                await asyncio.wait_for(lease.lost.wait(), 5)
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)


if __name__ == "__main__":
    unittest.main()
