"""redlockd.aio against the fake services: leases, keep-alive, extend, with_lock, elections,
observation as an async iterator, and lead() (the work task cancelled on loss)."""
import asyncio
import threading
import time
import unittest

import grpc

from fakeserver import FAST_RETRY, ManualClock, Replica, campaign_answer
from redlockd import Leader, LeaseLost, LockNotAcquired
from redlockd._proto import election_pb2
from redlockd.aio import AsyncLease, AsyncLeadership, AsyncLockClient


def leader_state(value, term):
    return election_pb2.ObserveResponse(leader=election_pb2.Leadership(value=value, term=term))


def until_half_closed(requests):
    for _ in requests:
        pass


class AioCase(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.replica = Replica()
        self.fake = self.replica.fake
        self.elections = self.replica.elections
        self.channel = grpc.aio.insecure_channel(self.replica.target)
        await asyncio.wait_for(self.channel.channel_ready(), 5)
        self.answers = []
        self.client = AsyncLockClient(self.channel, retry=FAST_RETRY,
                                      _answered=self.answers.append)

    async def asyncTearDown(self):
        await self.channel.close()
        self.replica.server.stop(None)

    async def wait_for(self, predicate, timeout=5.0):
        """Waits on the fake's recordings without blocking the loop."""
        return await asyncio.to_thread(self.fake.wait_for, predicate, timeout)

    async def wait_elections(self, predicate, timeout=5.0):
        return await asyncio.to_thread(self.elections.wait_for, predicate, timeout)

    async def assert_cancelled_at_the_guard(self, clock, run):
        """``run(work)`` (with_lock or lead, on a client with ``clock``) runs ``work`` until it is
        cancelled. The clock, which the test moves, goes to just before the guarded deadline
        (ttl 2 s: a guard of 100 ms), where nothing happens, then to it: the work is cancelled
        there, before the deadline, and ``run`` raises the loss. A busy machine's event loop
        runs its timers late, which is not the rule under test (the grant stops being valid at
        the guard, by reading the clock)."""
        work = UntilCancelled(clock)
        task = asyncio.ensure_future(run(work))
        await asyncio.wait_for(work.working.wait(), 5)
        held = work.held
        clock.advance(held.deadline - 0.1 - clock.now() - 0.001)
        await asyncio.sleep(0)
        self.assertIsNone(work.cancelled_at)
        self.assertFalse(held.lost.is_set())
        clock.advance(0.001)  # the guarded deadline: the timer declares the loss, on the loop
        self.assertTrue(held.lost.is_set())
        with self.assertRaises(LeaseLost) as caught:
            await asyncio.wait_for(task, 5)
        self.assertEqual(caught.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertIs(caught.exception, held.lost_error)
        self.assertLess(work.cancelled_at, held.deadline)


class UntilCancelled:
    """Work that waits to be cancelled, noting what it held and when (on ``clock``) it was."""

    def __init__(self, clock):
        self.clock = clock
        self.working = asyncio.Event()
        self.held = None
        self.cancelled_at = None

    async def __call__(self, held):
        self.held = held
        self.working.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled_at = self.clock.now()
            raise


class AsyncLeaseTest(AioCase):
    async def test_acquire_as_a_context_manager_releases_on_the_way_out(self):
        async with self.client.acquire("orders/1", ttl=10, wait=2) as lease:
            self.assertIsInstance(lease, AsyncLease)
            self.assertTrue(lease.valid)
            self.assertEqual(lease.fencing_token, 100)
            self.assertGreater(lease.remaining, 9)
            self.assertNotIn(self.fake.acquires[0][0].token, repr(lease))
        self.assertFalse(lease.valid)
        self.assertEqual([r.token for r in self.fake.releases], [self.fake.acquires[0][0].token])

    async def test_not_acquired_and_try_acquire(self):
        self.fake.on_acquire = lambda request, context, n: context.abort(grpc.StatusCode.ABORTED, "held")
        with self.assertRaises(LockNotAcquired):
            await self.client.acquire("r", ttl=10)
        self.assertIsNone(await self.client.try_acquire("r", ttl=10))

    async def test_keep_alive_renews_and_release_half_closes(self):
        lease = await self.client.acquire("r", ttl=0.4)
        first_deadline = lease.deadline
        lease.keep_alive()
        self.assertTrue(await self.wait_for(lambda: len(self.fake.keep_alive_requests) >= 3))
        self.assertGreater(lease.deadline, first_deadline)
        self.assertEqual([r.sequence for r, _ in self.fake.keep_alive_requests[:3]], [1, 2, 3])
        self.assertTrue(await lease.release())
        self.assertFalse(await lease.release())
        self.assertEqual(self.fake.releases, [])  # given back by the half-close

    async def test_extend_of_a_kept_lease_goes_through_the_stream(self):
        lease = await self.client.acquire("r", ttl=2)
        lease.keep_alive()
        await lease.extend(6)
        self.assertEqual(self.fake.extends, [])
        self.assertTrue(any(abs(r.ttl.ToNanoseconds() / 1e9 - 6) < 1e-6
                            for r, _ in self.fake.keep_alive_requests))
        self.assertGreater(lease.remaining, 5)
        self.assertEqual(lease.ttl, 6)
        await lease.close()

    async def test_unary_extend_when_not_kept(self):
        lease = await self.client.acquire("r", ttl=2)
        await lease.extend(5)
        self.assertEqual(len(self.fake.extends), 1)
        self.assertGreater(lease.remaining, 4)
        await lease.close()

    async def test_with_lock_returns_the_work_result(self):
        async def work(lease):
            self.assertTrue(lease.valid)
            return lease.fencing_token * 2

        self.assertEqual(await self.client.with_lock("r", 10, 1, work), 200)
        self.assertTrue(await self.wait_for(lambda: len(self.fake.keep_alive_requests) >= 1))

    async def test_with_lock_in_an_async_with_statement_as_with_permit(self):
        async with self.client.with_lock("r", ttl=10, wait=1) as lease:
            self.assertTrue(lease.valid)
            self.assertTrue(await self.wait_for(lambda: self.fake.keep_alive_requests))
        self.assertFalse(lease.valid)
        self.assertEqual(self.fake.releases, [])  # released by half-closing the stream

    async def test_with_lock_cancels_the_work_the_moment_the_lease_is_lost(self):
        def silent(requests, context):
            until_half_closed(requests)  # no renewal answered

        self.fake.on_keep_alive = silent
        clock = ManualClock()
        client = AsyncLockClient(self.channel, retry=FAST_RETRY, _clock=clock)
        await self.assert_cancelled_at_the_guard(clock, lambda work: client.with_lock("r", 2, 1, work))


class AsyncElectionTest(AioCase):
    async def test_campaign_proclaim_leader_and_resign(self):
        self.elections.on_leader = lambda request, context, n: election_pb2.LeaderResponse(
            leader=election_pb2.Leadership(value="x", term=3))
        async with self.client.campaign("scheduler", "a", ttl=2) as leadership:
            self.assertIsInstance(leadership, AsyncLeadership)
            self.assertTrue(leadership.is_leader)
            self.assertEqual(leadership.term, 500)
            await leadership.proclaim("a2")
            self.assertEqual(leadership.value, "a2")
            self.assertEqual(await self.client.leader("scheduler"), Leader("x", 3))
        self.assertFalse(leadership.is_leader)
        self.assertTrue(await self.wait_elections(lambda: self.elections.campaign_ends == ["half-closed"]))

    async def test_not_leading_within_the_wait_withdraws(self):
        def waiting(requests, context):
            until_half_closed(requests)

        self.elections.on_campaign = waiting
        with self.assertRaises(LockNotAcquired):
            await self.client.campaign("e", "v", ttl=2, wait=0.2)
        self.assertTrue(await self.wait_elections(lambda: self.elections.campaign_ends == ["half-closed"]))

    async def test_cancelling_a_campaign_withdraws_it(self):
        def waiting(requests, context):
            until_half_closed(requests)

        self.elections.on_campaign = waiting
        task = asyncio.ensure_future(self.client.campaign("e", "v", ttl=2))
        self.assertTrue(await self.wait_elections(lambda: len(self.elections.campaign_requests) >= 1))
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        self.assertTrue(await self.wait_elections(lambda: self.elections.campaign_ends == ["half-closed"]))

    async def test_observe_is_an_async_iterator_that_closing_ends(self):
        def script(request, context, n):
            yield election_pb2.ObserveResponse()
            yield leader_state("a", 5)
            yield leader_state("a", 5)  # no news
            yield leader_state("b", 6)
            while context.is_active():
                time.sleep(0.01)

        self.elections.on_observe = script
        seen = []
        async with self.client.observe("scheduler") as changes:
            async for leader in changes:
                seen.append(leader)
                if len(seen) == 3:
                    break
        self.assertEqual(seen, [None, Leader("a", 5), Leader("b", 6)])
        self.assertTrue(changes.closed)
        with self.assertRaises(StopAsyncIteration):
            await changes.__anext__()

    async def test_the_callback_form_runs_on_the_loop_until_closed(self):
        def script(request, context, n):
            yield election_pb2.ObserveResponse()
            yield leader_state("a", 5)
            while context.is_active():
                time.sleep(0.01)

        self.elections.on_observe = script
        seen = []
        got_two = asyncio.Event()

        def note(state):
            seen.append(state)
            if len(seen) == 2:
                got_two.set()

        observation = self.client.observe("e", note)
        await asyncio.wait_for(got_two.wait(), 5)
        observation.close()
        self.assertEqual(seen, [None, Leader("a", 5)])


class AsyncLeadTest(AioCase):
    async def test_lead_runs_the_work_then_resigns_and_returns_its_result(self):
        async def work(leadership):
            self.assertTrue(leadership.is_leader)
            return leadership.term

        self.assertEqual(await self.client.lead("e", "v", 2, work), 500)
        self.assertTrue(await self.wait_elections(lambda: self.elections.campaign_ends == ["half-closed"]))

    async def test_the_work_is_cancelled_before_the_deadline_and_lead_raises_the_loss(self):
        def answer_once(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=0.6)
            until_half_closed(requests)

        self.elections.on_campaign = answer_once
        clock = ManualClock()
        client = AsyncLockClient(self.channel, retry=FAST_RETRY, _clock=clock)
        await self.assert_cancelled_at_the_guard(clock, lambda work: client.lead("e", "v", 2, work))

    async def test_with_requeue_it_campaigns_again_after_a_loss(self):
        streams = []
        working = threading.Event()

        def script(requests, context):
            first = next(requests)
            streams.append(first.token)
            if len(streams) == 1:  # the first candidacy: led once, then ended by the server
                yield campaign_answer(first, 5, validity=10)
                working.wait(5)  # (a loss before the work started would cancel it unstarted)
                context.abort(grpc.StatusCode.NOT_FOUND, "taken over")
            yield campaign_answer(first, 9, validity=10)
            for request in requests:
                yield campaign_answer(request, 9, validity=10)

        self.elections.on_campaign = script
        terms = []

        async def work(leadership):
            terms.append(leadership.term)
            if len(terms) == 1:
                working.set()
                await leadership.lost.wait()  # cancelled there, the moment it is set
                return "told"
            return "done"

        self.assertEqual(await self.client.lead("e", "v", 10, work, requeue=True), "done")
        self.assertEqual(terms, [5, 9])
        self.assertNotEqual(streams[0], streams[1])  # a new candidacy, not a resume

    async def test_an_error_of_the_work_resigns_and_is_raised(self):
        async def work(leadership):
            raise ValueError("bad")

        with self.assertRaises(ValueError):
            await self.client.lead("e", "v", 2, work)
        self.assertTrue(await self.wait_elections(lambda: self.elections.campaign_ends == ["half-closed"]))

    async def test_cancelling_lead_cancels_the_work_and_resigns(self):
        started = asyncio.Event()
        cancelled = []

        async def work(leadership):
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

        task = asyncio.ensure_future(self.client.lead("e", "v", 2, work))
        await asyncio.wait_for(started.wait(), 5)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        self.assertEqual(cancelled, [True])
        self.assertTrue(await self.wait_elections(lambda: self.elections.campaign_ends == ["half-closed"]))


if __name__ == "__main__":
    unittest.main()
