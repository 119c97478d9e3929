"""Lease: release, the guard timer, loss callbacks, with_lock, string forms (rules 5, 7-9)."""
import threading
import time
import unittest

import grpc

from fakeserver import FakeServerCase, ManualClock, lease_message
from redlockd import LeaseLost, LockNotAcquired, LockServiceError
from redlockd._proto import lock_pb2


class ReleaseTest(FakeServerCase, unittest.TestCase):
    def test_release_is_idempotent(self):
        lease = self.client.acquire("orders/1", ttl=10)
        self.assertTrue(lease.release())
        self.assertFalse(lease.release())
        self.assertFalse(lease.valid)
        self.assertEqual(lease.remaining, 0.0)
        self.assertEqual(len(self.fake.releases), 1)
        self.assertEqual(self.fake.releases[0].token, self.fake.acquires[0][0].token)

    def test_release_of_a_lease_no_longer_held_is_false(self):
        self.fake.on_release = lambda request, context, n: lock_pb2.ReleaseResponse(released=False)
        lease = self.client.acquire("orders/1", ttl=10)
        self.assertFalse(lease.release())
        self.assertFalse(lease.release())
        self.assertEqual(len(self.fake.releases), 1)

    def test_leaving_the_block_releases_and_never_raises_for_an_unreachable_lease(self):
        def unreachable(request, context, n):
            context.abort(grpc.StatusCode.UNAVAILABLE, "only 1 of 5 Redis nodes answered")

        self.fake.on_release = unreachable
        client = self.make_client(call_timeout=0.3)
        with client.acquire("orders/1", ttl=10) as lease:
            self.assertTrue(lease.valid)
        self.assertFalse(lease.valid)
        # Retried until the call timeout, not for the policy's 4 attempts.
        self.assertGreater(len(self.fake.releases), 4)
        with self.assertRaises(LockServiceError):
            client.acquire("orders/2", ttl=10).release()

    def test_extend_counts_the_new_deadline_from_its_send_time(self):
        lease = self.client.acquire("orders/1", ttl=1)
        before = time.monotonic()
        lease.extend(3)
        self.assertGreaterEqual(lease.deadline, before + 2.97)
        self.assertLessEqual(lease.deadline, time.monotonic() + 2.97)
        self.assertEqual(self.fake.extends[0].token, self.fake.acquires[0][0].token)
        self.assertGreater(lease.remaining, 2.8)

    def test_extend_not_found_loses_the_lease(self):
        def gone(request, context, n):
            context.abort(grpc.StatusCode.NOT_FOUND, f"lease on resource '{request.resource}' is not held")

        self.fake.on_extend = gone
        lease = self.client.acquire("orders/1", ttl=10)
        errors = []
        lease.on_lost(errors.append)
        with self.assertRaises(LeaseLost) as caught:
            lease.extend(10)
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(errors, [caught.exception])
        self.assertFalse(lease.valid)


class GuardTest(FakeServerCase, unittest.TestCase):
    def test_the_loss_is_reported_a_guard_before_the_deadline(self):
        # On a clock the test moves: how late a busy machine's timer thread runs is not the
        # rule under test (the lease stops being valid at the guard, by reading the clock).
        self.fake.on_acquire = lambda request, context, n: self.fake.grant(request, context, n, validity=0.3)
        clock = ManualClock()
        lease = self.make_client(_clock=clock).acquire("orders/1", ttl=0.3)
        fired = threading.Event()
        seen = []

        def lost(error):
            seen.append((clock.now(), error, threading.current_thread()))
            fired.set()

        lease.on_lost(lost)
        guard = 0.3 / 20
        clock.advance(lease.deadline - guard - clock.now() - 0.001)
        self.assertTrue(lease.valid)
        self.assertFalse(fired.is_set())
        clock.advance(0.001)  # the guarded deadline: the timer declares the loss
        self.assertFalse(lease.valid)
        self.assertTrue(fired.wait(5))
        at, error, thread = seen[0]
        self.assertIsInstance(error, LeaseLost)
        self.assertEqual(error.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertGreaterEqual(at, lease.deadline - guard)
        self.assertLess(at, lease.deadline)
        self.assertIsNot(thread, threading.main_thread())  # not on the timer's thread either
        # A callback registered after the loss runs at once.
        late = []
        lease.on_lost(late.append)
        self.assertEqual(late, [error])
        self.assertEqual(len(seen), 1)


class WithLockTest(FakeServerCase, unittest.TestCase):
    def test_runs_the_work_with_the_lease_kept_alive_and_releases_after(self):
        def work(lease):
            self.assertTrue(lease.valid)
            self.assertTrue(self.fake.wait_for(lambda: self.fake.keep_alive_requests))
            return lease.fencing_token * 2

        self.assertEqual(self.client.with_lock("orders/1", 10, 1, work), 200)
        first = self.fake.keep_alive_requests[0][0]
        self.assertEqual(first.token, self.fake.acquires[0][0].token)
        self.assertEqual(first.sequence, 1)
        self.assertEqual(self.fake.releases, [])  # released by half-closing the stream

    def test_raises_lease_lost_after_the_work_when_the_lease_was_lost(self):
        def lose_after_first_answer(requests, context):
            request = next(requests)
            yield lock_pb2.KeepAliveResponse(lease=lease_message(request.resource, request.token, 10),
                                             sequence=request.sequence)
            context.abort(grpc.StatusCode.NOT_FOUND, f"lease on resource '{request.resource}' was taken over")

        self.fake.on_keep_alive = lose_after_first_answer

        def work(lease):
            lost = threading.Event()
            lease.on_lost(lambda error: lost.set())
            self.assertTrue(lost.wait(5))
            self.assertFalse(lease.valid)
            return "done"

        with self.assertRaises(LeaseLost) as caught:
            self.client.with_lock("orders/1", 10, 1, work)
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_the_work_error_passes_through(self):
        def work(lease):
            raise KeyError("boom")

        with self.assertRaises(KeyError):
            self.client.with_lock("orders/1", 10, 1, work)

    def test_in_a_with_statement_as_with_permit(self):
        with self.client.with_lock("orders/1", ttl=10, wait=1) as lease:
            self.assertTrue(lease.valid)
            self.assertTrue(self.fake.wait_for(lambda: self.fake.keep_alive_requests))
        self.assertFalse(lease.valid)
        self.assertEqual(self.fake.keep_alive_requests[0][0].token, self.fake.acquires[0][0].token)
        self.assertEqual(self.fake.releases, [])  # released by half-closing the stream

        def lose_after_first_answer(requests, context):
            request = next(requests)
            yield lock_pb2.KeepAliveResponse(lease=lease_message(request.resource, request.token, 10),
                                             sequence=request.sequence)
            context.abort(grpc.StatusCode.NOT_FOUND, "taken over")

        self.fake.on_keep_alive = lose_after_first_answer
        with self.assertRaises(LeaseLost) as caught:
            with self.client.with_lock("orders/1", ttl=10) as lease:
                self.assertTrue(lease.lost.wait(5))
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)


class StringFormTest(FakeServerCase, unittest.TestCase):
    def test_no_string_form_contains_the_token(self):
        lease = self.client.acquire("orders/1", ttl=10)
        token = self.fake.acquires[0][0].token
        self.assertIn("orders/1", repr(lease))
        self.assertIn("fencing_token=100", str(lease))

        def held(request, context, n):
            context.abort(grpc.StatusCode.ABORTED, f"resource '{request.resource}' is held by another owner")

        self.fake.on_acquire = held
        with self.assertRaises(LockNotAcquired) as not_acquired:
            self.client.acquire("orders/1", ttl=10)
        lost = LeaseLost(grpc.StatusCode.NOT_FOUND, "lease on resource 'orders/1' is not held")
        forms = [repr(lease), str(lease), repr(self.client), str(self.client),
                 repr(not_acquired.exception), str(not_acquired.exception), repr(lost), str(lost)]
        lease.release()
        forms += [repr(lease), str(lease)]
        for form in forms:
            self.assertNotIn(token, form)
        for token_of_competitor in (request.token for request, _ in self.fake.acquires[1:]):
            for form in forms:
                self.assertNotIn(token_of_competitor, form)


if __name__ == "__main__":
    unittest.main()
