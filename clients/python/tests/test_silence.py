"""A kept stream that stops answering (issue 40's silent stream rule): once its oldest unanswered
request has waited ttl/4, the client opens a new one at once with the same first request,
without a loss; the silent one sends nothing more, its late answers still count, and it is
cancelled (never half-closed) once the new one answers. A candidate still waiting to lead is not
held to it. The silence is a step of a clock the test moves (ManualClock), not a sleep; the sync
client and redlockd.aio alike, and the bookkeeping both share (Sequencer, Reopening) alone."""
import asyncio
import threading
import time
import unittest

import grpc

import redlockd
from fakeserver import FakeServerCase, ManualClock, Replica, campaign_answer
from redlockd import RetryPolicy
from redlockd._kept import Reopening, Sequencer, SlowestAnswer, bound_of, silence_bound
from redlockd.aio import AsyncLockClient
from test_aio import AioCase
from test_resume import LossRecorder, Streams, answer, eventually

#: A backoff far longer than the test waits for a reopen: a reopen that came sooner waited none.
SLOW_BACKOFF = RetryPolicy(max_attempts=4, initial_backoff=2.0, max_backoff=2.0)


def until_ended(requests):
    for _ in requests:
        pass


def silent_then_echo(streams, first_stream_answers=0):
    """The first stream answers its first ``first_stream_answers`` requests and then none (it
    reads on, as a frozen replica's socket takes them in); every later stream echoes each."""
    def script(requests, context):
        n = streams.next()
        for i, request in enumerate(requests):
            if n > 1 or i < first_stream_answers:
                yield answer(request, 0.99 * request.ttl.ToNanoseconds() / 1e9)
    return script


class SilenceBookkeepingTest(unittest.TestCase):
    """What both flavours decide from: when a stream is silent, and how soon it reopens."""

    def test_the_bound_is_a_quarter_of_the_ttl(self):
        self.assertEqual(silence_bound(3.0), 0.75)

    def test_silence_counts_from_the_oldest_request_no_answer_echoed(self):
        clock = ManualClock(start=10.0)
        seq = Sequencer(clock)
        seq.new_stream()
        self.assertIsNone(seq.silent_at(1.0))  # nothing sent
        seq.next(lambda s, first: s, first=True)  # 1 at 10
        clock.advance(0.5)
        seq.next(lambda s, first: s, first=False)  # 2 at 10.5
        self.assertEqual(seq.silent_at(1.0), 11.0)
        seq.accepted(1, 10.0)  # an answer echoing 1 answers 1 only
        self.assertEqual(seq.silent_at(1.0), 11.5)
        seq.accepted(2, 10.5)
        self.assertIsNone(seq.silent_at(1.0))
        clock.advance(0.5)
        seq.next(lambda s, first: s, first=False)  # 3 at 11
        clock.advance(0.5)
        seq.next(lambda s, first: s, first=False)  # 4 at 11.5
        seq.accepted(4, 11.5)  # an answer echoing 4 answers every earlier request too
        self.assertIsNone(seq.silent_at(1.0))

    def test_a_new_stream_counts_only_its_own_requests_and_answers(self):
        clock = ManualClock(start=10.0)
        seq = Sequencer(clock)
        seq.new_stream()
        seq.next(lambda s, first: s, first=True)  # 1 at 10, unanswered
        clock.advance(2.0)
        seq.new_stream()
        self.assertIsNone(seq.silent_at(0.5))  # the old stream's request is not the new one's
        seq.next(lambda s, first: s, first=True)  # 2 at 12, the first of the new stream
        self.assertEqual(seq.silent_at(0.5), 12.5)
        seq.accepted(2, 12.0)
        self.assertIsNone(seq.silent_at(0.5))

    def test_a_silence_reopens_at_once_and_counts_as_a_failure_for_a_later_backoff(self):
        reopening = Reopening(lambda failures: True, lambda attempt: attempt / 8)
        unavailable = grpc.StatusCode.UNAVAILABLE
        self.assertEqual(reopening.after(unavailable, True, 5.0, False, silent=True), (0.0, None))
        self.assertEqual(reopening.after(unavailable, False, 5.0, False, silent=True), (0.0, None))
        # A refusal after two silences in a row backs off as a third failure (a silence lasts
        # a bound, however long: its length says nothing of a refusal).
        self.assertEqual(reopening.after(unavailable, False, 0.1, False), (0.375, None))
        # An answer starts the count again.
        self.assertEqual(reopening.after(unavailable, True, 0.1, False), (0.125, None))

    def test_a_stream_replacing_a_silent_one_is_held_to_a_third_until_it_answers(self):
        self.assertEqual(bound_of(0.75, replacing=False, answered=False), 0.75)
        self.assertEqual(bound_of(0.75, replacing=True, answered=False), 0.25)
        self.assertEqual(bound_of(0.75, replacing=True, answered=True), 0.75)
        self.assertIsNone(bound_of(None, replacing=True, answered=False))

    def test_the_bound_is_at_least_twice_the_slowest_recent_answer_up_to_twice_itself(self):
        # Issue 40: a slow replica is not a silent one; a third of the bound was not enough for
        # a restarted replica, and every grant reopening every third of a period made it slower.
        self.assertEqual(bound_of(0.75, replacing=True, answered=False, slowest=0.2), 0.4)
        self.assertEqual(bound_of(0.75, replacing=True, answered=False, slowest=0.1), 0.25)
        self.assertEqual(bound_of(0.75, replacing=False, answered=False, slowest=0.6), 1.2)
        self.assertEqual(bound_of(0.75, replacing=False, answered=False, slowest=2.0), 1.5)
        self.assertIsNone(bound_of(None, replacing=True, answered=False, slowest=2.0))

    def test_the_slowest_answer_fades_by_half_every_ttl_and_one_later_than_the_ttl_is_left_out(self):
        slowest = SlowestAnswer()
        self.assertEqual(slowest.seconds(0.0, 1.0), 0.0)
        slowest.answered(0.8, 10.0, 1.0)
        slowest.answered(0.3, 10.5, 1.0)  # faster: the slower one still counts
        self.assertAlmostEqual(slowest.seconds(10.0, 1.0), 0.8)
        self.assertAlmostEqual(slowest.seconds(14.0, 1.0), 0.4)
        slowest.answered(4.5, 14.0, 1.0)  # later than the ttl (4 periods): a stopped replica
        self.assertAlmostEqual(slowest.seconds(14.0, 1.0), 0.4)

    def test_a_silence_past_the_guarded_deadline_is_the_end(self):
        reopening = Reopening(lambda failures: False, lambda attempt: 0.1)
        self.assertEqual(reopening.after(grpc.StatusCode.UNAVAILABLE, True, 1.0, False,
                                         silent=True), (None, True))


class SyncSilenceTest(FakeServerCase, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.clock = ManualClock()
        self.fake.note_ends = True

    def test_a_kept_stream_that_stops_answering_is_replaced_at_once_and_then_cancelled(self):
        streams = Streams()
        self.fake.on_keep_alive = silent_then_echo(streams)
        client = self.make_client(_clock=self.clock, retry=SLOW_BACKOFF)
        lease = client.acquire("orders/1", ttl=4)  # silence bound 1 s (on the test's clock)
        token = self.fake.acquires[0][0].token
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: self.fake.keep_alive_requests))
        self.clock.advance(0.999)
        self.assertEqual((streams.count, self.fake.keep_alive_ends), (1, []))
        silenced_at = time.monotonic()
        self.clock.advance(0.002)  # the first request has waited 1 s: cancelled here
        self.assertTrue(self.fake.wait_for(lambda: self.fake.keep_alive_ends))
        self.assertEqual(self.fake.keep_alive_ends, ["cancelled"])  # never a half-close
        self.assertTrue(lease._keeper.wait_answers(1, 5))  # the second stream answered
        self.assertLess(self.fake.keep_alive_requests[1][1] - silenced_at, 1.0,
                        "reopened without the (1 to 2 s) backoff")
        first, second = [r for r, _ in self.fake.keep_alive_requests[:2]]
        self.assertEqual((second.token, second.resource), (token, "orders/1"))
        self.assertGreater(second.sequence, first.sequence)
        self.assertEqual(streams.count, 2)
        self.assertGreater(lease.deadline, self.clock.now() + 3)  # renewed through the new one
        self.assertTrue(lease.valid)
        self.assertEqual(lost.calls, [])
        self.assertTrue(lease.release())
        self.assertEqual(self.fake.releases, [])  # the half-close of the second stream

    def test_a_replacement_that_lands_on_the_silent_replica_again_is_replaced_within_a_third(self):
        streams = Streams()

        def script(requests, context):
            n = streams.next()
            for request in requests:
                if n > 2:  # the first two streams reach the silent replica (round_robin's luck)
                    yield answer(request, 3.96)

        self.fake.on_keep_alive = script
        client = self.make_client(_clock=self.clock, retry=SLOW_BACKOFF)
        lease = client.acquire("orders/1", ttl=4)
        lease.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: self.fake.keep_alive_requests))
        self.clock.advance(1.001)  # silent: a second stream
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) == 2))
        self.clock.advance(0.332)
        self.assertEqual(streams.count, 2)
        self.clock.advance(0.002)  # a third of the bound: a third stream
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        self.assertEqual(streams.count, 3)
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_ends) == 2))
        self.assertEqual(self.fake.keep_alive_ends, ["cancelled", "cancelled"])
        self.assertTrue(lease.valid)
        self.assertTrue(lease.release())

    def test_the_bound_follows_the_slow_answers_of_the_clients_other_grants(self):
        # Issue 40: a stream that just moved (its replica shut down) has no answer of its own,
        # and hundreds moved with it to replicas busy starting, which answer each of them late.
        # Held to a quarter of its ttl, every one was replaced, and each replacement made the
        # replicas slower still. The answers the client's other grants get say how slow.
        slow_may_answer = threading.Event()
        quiet = Streams()

        def script(requests, context):
            first = next(requests)
            if first.resource == "orders/slow":
                slow_may_answer.wait(5)
                yield answer(first, 3.96)
                for request in requests:
                    yield answer(request, 3.96)
            elif quiet.next() > 1:
                yield answer(first, 3.96)
                for request in requests:
                    yield answer(request, 3.96)
            else:
                until_ended(requests)  # a replica that takes the requests in and answers none

        self.fake.on_keep_alive = script
        client = self.make_client(_clock=self.clock, retry=SLOW_BACKOFF)
        slow = client.acquire("orders/slow", ttl=4)  # silence bound 1 s (on the test's clock)
        moved = client.acquire("orders/quiet", ttl=4)
        slow.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) == 1))
        self.clock.advance(0.9)
        slow_may_answer.set()  # answered 0.9 s after its request: within its own bound
        self.assertTrue(slow._keeper.wait_answers(1, 5))
        moved.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) == 2))
        self.clock.advance(1.2)  # past its own 1 s, within twice the client's slowest (0.9 s)
        self.assertEqual(moved._keeper.streams, 1)
        self.clock.advance(0.7)  # (the slowest fades by half every ttl: here to 0.65 s)
        self.assertTrue(moved._keeper.wait_answers(1, 5))  # replaced, and answered
        self.assertEqual((moved._keeper.streams, quiet.count), (2, 2))
        self.assertTrue(moved.valid)
        self.assertTrue(moved.release() and slow.release())

    def test_a_late_answer_on_a_stream_left_for_its_silence_does_not_lift_the_other_grants_bound(self):
        # A frozen replica that woke answers late on the streams left on it: that says the
        # replica stopped, not that every replica is slow. Counted for the other grants, it
        # held them on the next silent replica for twice as long (replica-silent failed so
        # for Node, which keeps such streams open until the grant is over).
        late = threading.Event()
        replacement_may_answer = threading.Event()
        woke = Streams()
        moved = Streams()

        def script(requests, context):
            first = next(requests)
            if first.resource == "orders/woke":
                n = woke.next()
                (late if n == 1 else replacement_may_answer).wait(5)
                if n == 1:  # a frozen replica, answering once it wakes; read on to its cancel
                    reading = threading.Thread(target=until_ended, args=(requests,))
                    reading.start()
                    yield answer(first, 3.96)
                    reading.join(5)
                    return
            elif moved.next() == 1:
                until_ended(requests)  # silent
                return
            yield answer(first, 3.96)
            for request in requests:
                yield answer(request, 3.96)

        self.fake.on_keep_alive = script
        client = self.make_client(_clock=self.clock, retry=SLOW_BACKOFF)
        frozen = client.acquire("orders/woke", ttl=4)  # silence bound 1 s (on the test's clock)
        other = client.acquire("orders/moved", ttl=4)
        frozen.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) == 1))
        self.clock.advance(1.001)  # silent: a second stream
        self.assertTrue(self.fake.wait_for(lambda: woke.count == 2))
        self.clock.advance(0.5)
        late.set()  # the first stream's answer, 1.5 s after its request
        self.assertTrue(frozen._keeper.wait_answers(1, 5))
        replacement_may_answer.set()
        self.assertTrue(frozen._keeper.wait_answers(2, 5))
        other.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: moved.count == 1))
        self.clock.advance(1.001)  # its own bound: superseded, as if no grant had been slow
        self.assertTrue(other._keeper.wait_answers(1, 5))
        self.assertEqual(moved.count, 2)
        self.assertTrue(other.valid and frozen.valid)
        self.assertTrue(other.release() and frozen.release())

    def test_a_late_answer_of_the_silent_stream_still_counts(self):
        streams = Streams()
        late = threading.Event()
        new_may_answer = threading.Event()

        def script(requests, context):
            n = streams.next()
            first = next(requests)
            if n == 1:
                late.wait(5)  # a replica that was only slow answers after the bound
                # Its end is read on a thread of its own: gRPC stops resuming a handler whose
                # call was cancelled while its answer was being sent, so the handler itself
                # would never see (and the fake never record) the cancel that follows that answer.
                reading = threading.Thread(target=until_ended, args=(requests,))
                reading.start()
                yield answer(first, 3.96)
                reading.join(5)
                return
            new_may_answer.wait(5)
            yield answer(first, 3.96)
            for request in requests:
                yield answer(request, 3.96)

        self.fake.on_keep_alive = script
        client = self.make_client(_clock=self.clock, retry=SLOW_BACKOFF)
        lease = client.acquire("orders/1", ttl=4)
        lease.keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: self.fake.keep_alive_requests))
        first_sent = self.clock.now()
        self.clock.advance(1.001)  # silent: a second stream, the first one still read
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) >= 2))
        self.assertEqual(self.fake.keep_alive_ends, [])
        late.set()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        self.assertEqual(lease.deadline, first_sent + 3.96)  # dated by the first stream's request
        self.assertEqual(self.fake.keep_alive_ends, [])  # kept until the new one answers
        new_may_answer.set()
        # The silent stream is cancelled once the new one answers, never half-closed (a release);
        # a busy machine may have opened and cancelled another replacement meanwhile.
        self.assertTrue(self.fake.wait_for(lambda: "cancelled" in self.fake.keep_alive_ends))
        self.assertTrue(all(end == "cancelled" for end in self.fake.keep_alive_ends), self.fake.keep_alive_ends)
        self.assertTrue(lease.valid)
        self.assertTrue(lease.release())

    def test_an_answering_stream_is_never_silent(self):
        streams = Streams()
        self.fake.on_keep_alive = silent_then_echo(streams, first_stream_answers=1000)
        lease = self.make_client(_clock=self.clock).acquire("orders/1", ttl=100)
        lease.keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        self.clock.advance(50)  # 2 silence bounds, with nothing left unanswered
        self.assertEqual(streams.count, 1)
        self.assertTrue(lease.valid)
        self.assertTrue(lease.release())

    def test_a_leaders_silent_stream_is_resumed_and_a_waiting_candidates_is_not(self):
        streams = Streams()
        lead = threading.Event()

        def script(requests, context):
            n = streams.next()
            first = next(requests)
            if n == 1:
                lead.wait(5)  # waiting to lead: no answers to expect
                yield campaign_answer(first, 7)
                for _ in requests:  # leading, and then silent
                    pass
                return
            yield campaign_answer(first, 7)
            for request in requests:
                yield campaign_answer(request, 7)

        self.elections.on_campaign = script
        client = self.make_client(_clock=self.clock, retry=SLOW_BACKOFF)
        led = []
        campaigning = threading.Thread(target=lambda: led.append(client.campaign("e", "v", ttl=4)))
        campaigning.start()
        self.assertTrue(self.elections.wait_for(lambda: self.elections.campaign_requests))
        self.clock.advance(2.0)  # two silence bounds while waiting: nothing happens
        self.assertEqual((streams.count, self.elections.campaign_ends), (1, []))
        lead.set()
        campaigning.join(5)
        leadership = led[0]
        token = self.elections.campaign_requests[0][0].token
        lost = LossRecorder()
        leadership.on_lost(lost)
        leadership._campaign._send_value("v")  # a request now, which the leader's stream leaves unanswered
        self.assertTrue(self.elections.wait_for(lambda: len(self.elections.campaign_requests) >= 2))
        self.clock.advance(1.001)
        self.assertTrue(self.elections.wait_for(lambda: streams.count >= 2))
        self.assertTrue(eventually(lambda: leadership._stream.answers >= 2))
        # Cancelled (never half-closed) once the new stream answered.
        self.assertTrue(self.elections.wait_for(lambda: self.elections.campaign_ends))
        self.assertEqual(self.elections.campaign_ends[0], "cancelled")
        resumed = [r for r, _ in self.elections.campaign_requests if r.token][1]
        self.assertEqual((resumed.token, resumed.resume), (token, True))
        self.assertEqual(leadership.term, 7)
        self.assertTrue(leadership.is_leader)
        self.assertEqual(lost.calls, [])
        self.assertTrue(leadership.resign())


class NoReplicaUpTest(FakeServerCase, unittest.TestCase):
    def test_a_kept_stream_waits_for_a_replica_to_come_back_instead_of_failing(self):
        channel = redlockd.channel([self.target])  # reconnects within a second
        self.channels.append(channel)
        lease = self.make_client(channel).acquire("orders/1", ttl=6)
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        self.replica.stop()  # the only replica goes (a rolling restart's moment with none up)
        time.sleep(0.5)
        back = Replica(self.replica.port)
        self.replicas.append(back)
        self.assertTrue(back.fake.wait_for(lambda: back.fake.keep_alive_requests))
        self.assertTrue(lease._keeper.wait_answers(2, 5))
        # One stream waited for the connection: no refused reopens in between.
        self.assertEqual(lease._keeper.streams, 2)
        self.assertEqual(lost.calls, [])
        self.assertTrue(lease.release())


class AsyncSilenceTest(AioCase):
    async def asyncSetUp(self):
        await super().asyncSetUp()
        self.fake.note_ends = True
        self.clock = ManualClock()
        self.client = AsyncLockClient(self.channel, retry=SLOW_BACKOFF, _clock=self.clock)

    async def test_a_kept_stream_that_stops_answering_is_replaced_at_once_and_then_cancelled(self):
        streams = Streams()
        self.fake.on_keep_alive = silent_then_echo(streams)
        lease = await self.client.acquire("orders/1", ttl=4)
        token = self.fake.acquires[0][0].token
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(await self.wait_for(lambda: self.fake.keep_alive_requests))
        self.clock.advance(0.999)
        await asyncio.sleep(0.05)
        self.assertEqual((streams.count, self.fake.keep_alive_ends), (1, []))
        silenced_at = time.monotonic()
        self.clock.advance(0.002)
        self.assertTrue(await self.wait_for(lambda: len(self.fake.keep_alive_requests) >= 2))
        self.assertLess(self.fake.keep_alive_requests[1][1] - silenced_at, 1.0,
                        "reopened without the (1 to 2 s) backoff")
        self.assertTrue(await self.wait_for(lambda: self.fake.keep_alive_ends))
        self.assertEqual(self.fake.keep_alive_ends, ["cancelled"])
        second = self.fake.keep_alive_requests[1][0]
        self.assertEqual(second.token, token)
        self.assertTrue(await asyncio.to_thread(
            eventually, lambda: lease.deadline > self.clock.now() + 3))
        self.assertTrue(lease.valid)
        self.assertEqual(lost.calls, [])
        self.assertTrue(await lease.release())
        self.assertEqual(self.fake.releases, [])


if __name__ == "__main__":
    unittest.main()
