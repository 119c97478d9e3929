"""Resume (rule 14), ttl changes through the stream (rule 15) and several replicas (rule 16),
for kept leases and leaderships, against the fake servers."""
import threading
import time
import unittest

import grpc

import redlockd
from fakeserver import FakeServerCase, ManualClock, campaign_answer, lease_message
from redlockd import LeaseLost
from redlockd._channel import target
from redlockd._proto import lock_pb2


def answer(request, validity, sequence=None, fencing_token=7):
    return lock_pb2.KeepAliveResponse(
        lease=lease_message(request.resource, request.token, validity, fencing_token),
        state=lock_pb2.LEASE_STATE_HELD,
        sequence=request.sequence if sequence is None else sequence)


def until_half_closed(requests):
    for _ in requests:
        pass


def ttl_of(request):
    return request.ttl.ToNanoseconds() / 1e9


def eventually(predicate, timeout=10.0):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


class Streams:
    """Counts the streams a script serves, so that it can act per stream."""

    def __init__(self):
        self.lock = threading.Lock()
        self.count = 0

    def next(self):
        with self.lock:
            self.count += 1
            return self.count


class LossRecorder:
    """The loss callbacks' calls, each dated by ``clock`` (a test's, or time.monotonic())."""

    def __init__(self, clock=None):
        self.calls = []
        self.fired = threading.Event()
        self._now = time.monotonic if clock is None else clock.now

    def __call__(self, error):
        self.calls.append((self._now(), error))
        self.fired.set()


class KeepAliveResumeTest(FakeServerCase, unittest.TestCase):
    def test_a_stream_ending_unavailable_is_resumed_with_the_same_token_and_no_loss(self):
        streams = Streams()

        def script(requests, context):
            n = streams.next()
            if n == 1:
                first = next(requests)
                yield answer(first, 1.98)
                next(requests)  # one periodic request more, then the replica shuts down
                context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")
            for request in requests:  # the resumed stream
                yield answer(request, 1.98)

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=2)
        fencing_token = lease.fencing_token
        token = self.fake.acquires[0][0].token
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(eventually(lambda: streams.count >= 2 and lease._keeper.wait_answers(2, 0.01)))
        requests = [r for r, _ in self.fake.keep_alive_requests]
        self.assertTrue(all(r.token == token and r.resource == "orders/1" for r in requests))
        sequences = [r.sequence for r in requests]
        self.assertEqual(sequences, sorted(set(sequences)))  # rising across the two streams
        self.assertGreaterEqual(len(sequences), 3)
        # The resumed stream's answers move the deadline: past what the first stream gave.
        resumed_at = self.fake.keep_alive_requests[2][1]
        self.assertTrue(eventually(lambda: lease.deadline > resumed_at + 1.0))
        self.assertEqual(lease._keeper.streams, 2)
        self.assertTrue(lease.valid)
        self.assertEqual(lease.fencing_token, fencing_token)
        self.assertEqual(lost.calls, [])
        self.assertTrue(lease.release())  # half-closes the resumed stream
        self.assertEqual(self.fake.releases, [])

    def test_the_deadline_stays_while_the_stream_is_down_and_the_loss_comes_at_the_guard(self):
        streams = Streams()

        def script(requests, context):
            n = streams.next()
            first = next(requests)
            if n == 1:
                yield answer(first, 1.98)
            context.abort(grpc.StatusCode.UNAVAILABLE, "connection refused")

        self.fake.on_keep_alive = script
        # The grant's clock is one the test moves (the reopens wait real time): a busy machine's
        # late timer is not the rule under test.
        clock = ManualClock()
        lease = self.make_client(_clock=clock).acquire("orders/1", ttl=2)  # guard 100 ms
        lost = LossRecorder(clock)
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        self.assertTrue(eventually(lambda: streams.count > 2))  # it keeps trying, with backoff
        deadline = lease.deadline
        self.assertEqual(deadline, clock.now() + 1.98)  # the first request's send time + validity
        clock.advance(deadline - 0.1 - clock.now() - 0.001)
        self.assertTrue(lease.valid)
        self.assertFalse(lost.fired.is_set())
        clock.advance(0.001)  # the guarded deadline
        self.assertTrue(lost.fired.wait(10))
        at, error = lost.calls[0]
        self.assertEqual(lease.deadline, deadline)  # not moved while down
        self.assertGreaterEqual(at, deadline - 0.1)
        self.assertLess(at, deadline)
        self.assertIsInstance(error, LeaseLost)
        self.assertEqual(error.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertGreater(streams.count, 2)  # it kept trying, with backoff
        self.assertFalse(lease.valid)
        opened = streams.count
        self.assertIsNotNone(lease._keeper.wait_end(5))  # the stream's end is processed
        self.assertEqual(len(lost.calls), 1)
        self.assertLessEqual(streams.count, opened + 1)  # and stopped trying once lost
        # Given back (fire and forget) when lost.
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.releases) == 1))

    def test_not_found_on_the_reopened_stream_is_a_loss_once(self):
        streams = Streams()

        def script(requests, context):
            n = streams.next()
            first = next(requests)
            if n == 1:
                yield answer(first, 4.95)
                context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")
            context.abort(grpc.StatusCode.NOT_FOUND, f"lease on resource '{first.resource}' is not held")

        self.fake.on_keep_alive = script
        self.fake.on_release = lambda request, context, n: lock_pb2.ReleaseResponse(released=False)
        lease = self.client.acquire("orders/1", ttl=5)
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(lost.fired.wait(10))
        self.assertEqual(lost.calls[0][1].code, grpc.StatusCode.NOT_FOUND)
        self.assertFalse(lease.valid)
        self.assertIsNotNone(lease._keeper.wait_end(5))
        self.assertEqual(len(lost.calls), 1)
        self.assertEqual(streams.count, 2)  # not reopened after NOT_FOUND
        self.assertEqual(self.fake.releases, [])  # nothing to give back

    def test_permission_denied_ends_it_without_a_reopen(self):
        streams = Streams()

        def script(requests, context):
            streams.next()
            next(requests)
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "not granted")
            yield  # pragma: no cover

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=5)
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(lost.fired.wait(10))
        self.assertEqual(lost.calls[0][1].code, grpc.StatusCode.PERMISSION_DENIED)
        self.assertIsNotNone(lease._keeper.wait_end(5))
        self.assertEqual(streams.count, 1)


class TtlThroughTheStreamTest(FakeServerCase, unittest.TestCase):
    def test_extend_longer_then_shorter_goes_through_the_stream(self):
        go_on = threading.Event()

        def script(requests, context):
            previous = None
            for request in requests:
                ttl = ttl_of(request)
                if ttl == 2:  # the shorter ttl
                    # An answer for the request before it arrives late, with the longer
                    # validity: from now on it must be ignored.
                    yield answer(previous, 3.96)
                    go_on.wait(10)
                yield answer(request, ttl * 0.99)
                previous = request

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=1).keep_alive()
        keeper = lease._keeper
        self.assertTrue(keeper.wait_answers(1, 5))

        before = time.monotonic()
        lease.extend(4)  # longer
        longer = [(r, at) for r, at in self.fake.keep_alive_requests if ttl_of(r) == 4]
        self.assertEqual(len(longer), 1)
        self.assertEqual(self.fake.extends, [])  # no unary Extend
        request, arrived = longer[0]
        self.assertGreaterEqual(lease.deadline, before + 3.96 - 0.001)
        self.assertLessEqual(lease.deadline, arrived + 3.96)
        self.assertEqual(lease.ttl, 4)
        # The period follows the new ttl: the next request comes about 1 s later, not 1/4 s.
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) > 0 and
                                           self.fake.keep_alive_requests[-1][0].sequence > request.sequence, 5))
        after, after_at = self.fake.keep_alive_requests[-1]
        self.assertEqual(ttl_of(after), 4)
        self.assertGreater(after_at - arrived, 1 * 0.8)

        deadline_before = lease.deadline
        answers_before = keeper.answers
        returned = threading.Event()
        errors = []

        def shorten():
            try:
                lease.extend(2)
            except Exception as e:  # reported below
                errors.append(e)
            returned.set()

        threading.Thread(target=shorten, daemon=True).start()
        self.assertTrue(self.fake.wait_for(
            lambda: any(ttl_of(r) == 2 for r, _ in self.fake.keep_alive_requests), 5))
        shorter, shorter_at = [(r, at) for r, at in self.fake.keep_alive_requests if ttl_of(r) == 2][0]
        # Cut at once, before any answer: (send time + 2 * 0.99 - 2 ms), the send time being
        # before the fake saw it.
        self.assertTrue(eventually(lambda: lease.deadline <= shorter_at + 2 * 0.99 - 0.002))
        self.assertLess(lease.deadline, deadline_before)
        self.assertLessEqual(lease.remaining, 2)
        self.assertFalse(returned.is_set())  # waits for the answer to its own request
        # The late answer for an earlier request (3.96 s) came, and moved nothing.
        self.assertTrue(eventually(lambda: keeper.answers > answers_before))  # counted once processed
        self.assertLessEqual(lease.deadline, shorter_at + 2 * 0.99 - 0.002)
        go_on.set()
        self.assertTrue(returned.wait(5))
        self.assertEqual(errors, [])
        self.assertTrue(lease.valid)
        self.assertLessEqual(lease.deadline, time.monotonic() + 1.98)
        # Every later request carries the shorter ttl, every 1/2 s.
        count = len(self.fake.keep_alive_requests)
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) >= count + 2, 5))
        self.assertTrue(all(ttl_of(r) == 2 for r, _ in self.fake.keep_alive_requests[count:]))
        self.assertEqual(self.fake.extends, [])
        self.assertTrue(lease.release())

    def test_extend_of_a_kept_lease_that_is_gone_is_the_loss(self):
        def script(requests, context):
            first = next(requests)
            yield answer(first, 1.98)
            for request in requests:
                if ttl_of(request) == 5:
                    context.abort(grpc.StatusCode.NOT_FOUND, "lease on resource 'orders/1' is not held")
                yield answer(request, 1.98)

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=2).keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        with self.assertRaises(LeaseLost) as caught:
            lease.extend(5)
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertFalse(lease.valid)

    def test_extend_without_an_answer_times_out_and_keeps_the_shorter_belief(self):
        def script(requests, context):
            for request in requests:
                if ttl_of(request) == 2:
                    yield answer(request, 1.98)  # nothing for the other ttl

        self.fake.on_keep_alive = script
        client = self.make_client(call_timeout=0.3)
        lease = client.acquire("orders/1", ttl=2).keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        with self.assertRaises(redlockd.LockServiceError) as caught:
            lease.extend(1)
        self.assertEqual(caught.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        sent = [at for r, at in self.fake.keep_alive_requests if ttl_of(r) == 1][0]
        self.assertLessEqual(lease.deadline, sent + 0.99)
        lease.close()


class CampaignResumeTest(FakeServerCase, unittest.TestCase):
    def test_a_leader_whose_stream_breaks_resumes_with_its_token_and_term(self):
        streams = Streams()

        def script(requests, context):
            n = streams.next()
            if n == 1:
                first = next(requests)
                yield campaign_answer(first, 500)
                next(requests)
                context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")
            for request in requests:
                yield campaign_answer(request, 500)

        self.elections.on_campaign = script
        leadership = self.client.campaign("scheduler", "a", ttl=2)
        lost = LossRecorder()
        leadership.on_lost(lost)
        self.assertTrue(eventually(lambda: streams.count >= 2 and leadership._stream.wait_answers(3, 0.01)))
        requests = [r for r, _ in self.elections.campaign_requests]
        first = requests[0]
        self.assertEqual(len(first.token), 32)  # the client's own token (rule 1)
        self.assertFalse(first.resume)
        resumed = [r for r in requests if r.resume]
        self.assertEqual(len(resumed), 1)
        self.assertEqual(resumed[0].token, first.token)
        self.assertEqual((resumed[0].election, resumed[0].value), ("scheduler", "a"))
        self.assertAlmostEqual(ttl_of(resumed[0]), 2)
        sequences = [r.sequence for r in requests]
        self.assertEqual(sequences, sorted(set(sequences)))
        self.assertEqual(leadership.term, 500)
        self.assertTrue(leadership.is_leader)
        self.assertGreater(leadership.remaining, 1.5)
        self.assertEqual(lost.calls, [])
        self.assertTrue(leadership.resign())
        self.assertTrue(self.elections.wait_for(lambda: self.elections.campaign_ends == ["half-closed"]))

    def test_a_waiting_candidate_campaigns_again_with_the_same_token_without_resume(self):
        streams = Streams()

        def script(requests, context):
            n = streams.next()
            if n == 1:
                next(requests)  # waiting, then the replica goes away
                context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")
            first = next(requests)
            yield campaign_answer(first, 42)
            until_half_closed(requests)

        self.elections.on_campaign = script
        leadership = self.client.campaign("scheduler", "a", ttl=2, wait=5)
        requests = [r for r, _ in self.elections.campaign_requests]
        self.assertEqual(streams.count, 2)
        firsts = [r for r in requests if r.token]
        self.assertEqual(len(firsts), 2)
        self.assertEqual(firsts[0].token, firsts[1].token)
        self.assertEqual([r.resume for r in firsts], [False, False])
        self.assertEqual(leadership.term, 42)
        self.assertTrue(leadership.resign())

    def test_a_candidate_refused_again_and_again_fails_with_the_status(self):
        streams = Streams()

        def script(requests, context):
            streams.next()
            next(requests)
            context.abort(grpc.StatusCode.UNAVAILABLE, "only 1 of 3 Redis nodes answered")
            yield  # pragma: no cover

        self.elections.on_campaign = script
        with self.assertRaises(redlockd.LockServiceError) as caught:
            self.client.campaign("e", "v", ttl=2)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(streams.count, 4)  # the retry policy's attempts
        tokens = {r.token for r, _ in self.elections.campaign_requests}
        self.assertEqual(len(tokens), 1)

    def test_not_found_on_a_resumed_campaign_is_a_loss_once(self):
        streams = Streams()

        def script(requests, context):
            n = streams.next()
            first = next(requests)
            if n == 1:
                yield campaign_answer(first, 7, validity=4.95)
                context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")
            context.abort(grpc.StatusCode.NOT_FOUND, "leadership of election 'e' is not held")

        self.elections.on_campaign = script
        leadership = self.client.campaign("e", "v", ttl=5)
        lost = LossRecorder()
        leadership.on_lost(lost)
        self.assertTrue(lost.fired.wait(10))
        self.assertEqual(lost.calls[0][1].code, grpc.StatusCode.NOT_FOUND)
        self.assertFalse(leadership.is_leader)
        self.assertEqual(leadership.remaining, 0)
        self.assertIsNotNone(leadership._stream.wait_end(5))
        self.assertEqual(len(lost.calls), 1)
        self.assertEqual(streams.count, 2)
        self.assertTrue(self.elections.campaign_requests[-1][0].resume)
        self.assertFalse(leadership.resign())


class SeveralReplicasTest(FakeServerCase, unittest.TestCase):
    def test_targets(self):
        self.assertEqual(target(["10.0.0.1:1", "10.0.0.2:2"]), "ipv4:10.0.0.1:1,10.0.0.2:2")
        self.assertEqual(target("10.0.0.1:1, 10.0.0.2:2"), "ipv4:10.0.0.1:1,10.0.0.2:2")
        self.assertEqual(target(["[::1]:5", "[::2]:6"]), "ipv6:[::1]:5,[::2]:6")
        self.assertEqual(target("redlockd.internal:50051"), "dns:///redlockd.internal:50051")
        self.assertEqual(target("dns:///r:1"), "dns:///r:1")
        with self.assertRaises(ValueError):
            target(["a.example:1", "b.example:1"])
        with self.assertRaises(ValueError):
            target([])

    def test_two_addresses_one_stops_and_the_streams_resume_on_the_other(self):
        replicas = [self.replica, self.another_replica(), self.another_replica()]
        channel = redlockd.channel([r.target for r in replicas[:2]] + [replicas[2].target])
        self.channels.append(channel)
        client = self.make_client(channel)
        lease = client.acquire("orders/1", ttl=2)
        token = [r for replica in replicas for r, _ in replica.fake.acquires][0].token
        lost = LossRecorder()
        lease.on_lost(lost)
        lease.keep_alive()
        leadership = client.campaign("scheduler", "a", ttl=2)
        leadership.on_lost(lost)
        term = leadership.term

        def latest(kind):
            """The replica that saw the latest request of that kind (where its stream is)."""
            seen = [(getattr(r.fake if kind == "keep_alive" else r.elections, f"{kind}_requests")[-1][1], i)
                    for i, r in enumerate(replicas)
                    if getattr(r.fake if kind == "keep_alive" else r.elections, f"{kind}_requests")]
            return replicas[max(seen)[1]]

        self.assertTrue(eventually(lambda: any(r.fake.keep_alive_requests for r in replicas)))
        stopped = [latest("keep_alive")]
        stopped[0].stop()  # the replica of the lease's stream goes away
        alive = [r for r in replicas if r not in stopped]
        self.assertTrue(eventually(lambda: any(r.fake.keep_alive_requests for r in alive)))
        moved = [r.fake.keep_alive_requests[0][0] for r in alive if r.fake.keep_alive_requests][0]
        self.assertEqual((moved.resource, moved.token), ("orders/1", token))
        led_on = latest("campaign")
        if led_on not in stopped:  # then the leadership's replica goes away too
            stopped.append(led_on)
            led_on.stop()
        alive = [r for r in replicas if r not in stopped]
        self.assertTrue(eventually(lambda: any(
            q.resume for r in alive for q, _ in r.elections.campaign_requests)))
        resumed = [q for r in alive for q, _ in r.elections.campaign_requests if q.resume][0]
        self.assertEqual(len(resumed.token), 32)
        self.assertEqual((resumed.election, resumed.value), ("scheduler", "a"))
        # Both go on through the last replica: renewed past a whole ttl after the stops.
        last_stop = time.monotonic()
        self.assertTrue(eventually(lambda: lease.deadline > last_stop + 1.5
                                   and leadership.deadline > last_stop + 1.5))
        self.assertTrue(lease.valid)
        self.assertTrue(leadership.is_leader)
        self.assertEqual(leadership.term, term)
        self.assertEqual(lost.calls, [])
        self.assertTrue(lease.release())
        self.assertTrue(leadership.resign())


if __name__ == "__main__":
    unittest.main()

