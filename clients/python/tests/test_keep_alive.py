"""KeepAlive: sequences, the deadline, loss and release by half-close (rules 6-8)."""
import threading
import time
import unittest

import grpc

from fakeserver import FakeServerCase, ManualClock, lease_message
from redlockd import LeaseLost
from redlockd._proto import lock_pb2


def answer(request, validity, sequence=None):
    return lock_pb2.KeepAliveResponse(
        lease=lease_message(request.resource, request.token, validity),
        state=lock_pb2.LEASE_STATE_HELD,
        sequence=request.sequence if sequence is None else sequence)


def until_half_closed(requests):
    for _ in requests:
        pass


class KeepAliveTest(FakeServerCase, unittest.TestCase):
    def test_the_deadline_moves_only_by_echoed_sequences(self):
        go_on = threading.Event()

        def script(requests, context):
            first = next(requests)
            yield answer(first, 60.0, sequence=999)  # an answer it cannot date
            second = next(requests)  # sent a ttl/4 later
            go_on.wait(5)
            yield answer(first, 0.4)  # the renewal that began after the first request
            self.assertGreater(second.sequence, first.sequence)
            until_half_closed(requests)

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=0.4)
        granted = lease.deadline
        lease.keep_alive()
        keeper = lease._keeper
        self.assertTrue(keeper.wait_answers(1, 5))
        self.assertEqual(lease.deadline, granted)  # the unknown sequence moved nothing
        go_on.set()
        self.assertTrue(keeper.wait_answers(2, 5))
        (first, first_at), (second, second_at) = self.fake.keep_alive_requests[:2]
        self.assertEqual((first.sequence, second.sequence), (1, 2))
        self.assertEqual(first.token, self.fake.acquires[0][0].token)
        self.assertGreater(lease.deadline, granted)
        self.assertLessEqual(lease.deadline, first_at + 0.4)  # from the first request's send time,
        self.assertLess(lease.deadline, second_at + 0.4 - 0.05)  # not from a later one
        self.assertTrue(lease.release())
        self.assertEqual(self.fake.releases, [])

    def test_an_answer_for_an_earlier_renewal_does_not_move_the_deadline_back(self):
        def script(requests, context):
            first = next(requests)
            second = next(requests)
            yield answer(second, 0.4)
            yield answer(first, 0.4)  # older, arriving late
            until_half_closed(requests)

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=0.4).keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        after_second = lease.deadline
        self.assertTrue(lease._keeper.wait_answers(2, 5))
        self.assertEqual(lease.deadline, after_second)
        lease.release()

    def test_requests_keep_coming_every_quarter_ttl_with_rising_sequences(self):
        # The requests are paced by real time; the grant's clock is one the test holds still, so
        # that a busy machine's slow answer (past the silence bound, 50 ms here) opens no second
        # stream, whose first request could reach the fake before the first stream's next one.
        lease = self.make_client(_clock=ManualClock()).acquire("orders/1", ttl=0.2).keep_alive()
        self.assertTrue(self.fake.wait_for(lambda: len(self.fake.keep_alive_requests) >= 5))
        sequences = [r.sequence for r, _ in self.fake.keep_alive_requests[:5]]
        self.assertEqual(sequences, [1, 2, 3, 4, 5])
        times = [at for _, at in self.fake.keep_alive_requests[:5]]
        self.assertGreater(times[4] - times[0], 4 * 0.05 * 0.8)
        self.assertTrue(lease.valid)
        self.assertTrue(lease.release())

    def test_the_stream_ending_not_found_fires_the_loss_once(self):
        def script(requests, context):
            first = next(requests)
            yield answer(first, 0.5)
            context.abort(grpc.StatusCode.NOT_FOUND, f"lease on resource '{first.resource}' is not held")

        self.fake.on_keep_alive = script
        self.fake.on_release = lambda request, context, n: lock_pb2.ReleaseResponse(released=False)
        lease = self.client.acquire("orders/1", ttl=0.5)
        calls = []
        fired = threading.Event()

        def lost(error):
            calls.append(error)
            fired.set()

        lease.on_lost(lost)
        lease.keep_alive()
        self.assertTrue(fired.wait(5))
        self.assertIsInstance(calls[0], LeaseLost)
        self.assertEqual(calls[0].code, grpc.StatusCode.NOT_FOUND)
        self.assertFalse(lease.valid)
        # Past the deadline the guard timer does not report it a second time.
        threading.Event().wait(max(0.0, lease.deadline - time.monotonic()) + 0.1)
        self.assertEqual(len(calls), 1)
        late = []
        lease.on_lost(late.append)
        self.assertEqual(late, calls)
        self.assertFalse(lease.release())  # lost: the fallback Release says it was not held
        self.assertEqual(len(self.fake.releases), 1)

    def test_a_stream_ending_ok_unasked_is_a_loss(self):
        def script(requests, context):
            first = next(requests)
            yield answer(first, 10)

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=10)
        fired = threading.Event()
        errors = []
        lease.on_lost(lambda e: (errors.append(e), fired.set()))
        lease.keep_alive()
        self.assertTrue(fired.wait(5))
        self.assertEqual(errors[0].code, grpc.StatusCode.UNAVAILABLE)
        self.assertIn("orders/1", str(errors[0]))

    def test_release_half_closes_and_not_found_means_not_held(self):
        def script(requests, context):
            first = next(requests)
            yield answer(first, 10)
            until_half_closed(requests)
            context.abort(grpc.StatusCode.NOT_FOUND, f"lease on resource '{first.resource}' was not held")

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=10)
        errors = []
        lease.on_lost(errors.append)
        lease.keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        self.assertFalse(lease.release())
        self.assertFalse(lease.release())
        self.assertEqual(self.fake.releases, [])
        self.assertEqual(errors, [])  # the holder asked: not a loss

    def test_release_falls_back_to_a_release_call_when_the_stream_fails(self):
        def script(requests, context):
            first = next(requests)
            yield answer(first, 10)
            until_half_closed(requests)
            context.abort(grpc.StatusCode.INTERNAL, "something broke")

        self.fake.on_keep_alive = script
        lease = self.client.acquire("orders/1", ttl=10).keep_alive()
        self.assertTrue(lease._keeper.wait_answers(1, 5))
        self.assertTrue(lease.release())
        self.assertEqual(len(self.fake.releases), 1)


if __name__ == "__main__":
    unittest.main()
