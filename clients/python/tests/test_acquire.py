"""Acquire: tokens, retries, giving back, errors and the deadline (rules 1-4)."""
import base64
import re
import threading
import time
import unittest

import grpc

from fakeserver import FakeServerCase
from redlockd import LockNotAcquired, LockServiceError, RetryPolicy, new_token
from redlockd._durations import from_proto

TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{32}")


class TokenTest(unittest.TestCase):
    def test_token_is_192_bits_of_base64url_without_padding(self):
        tokens = {new_token() for _ in range(200)}
        self.assertEqual(len(tokens), 200)
        for token in tokens:
            self.assertRegex(token, TOKEN_SHAPE)
            self.assertEqual(len(base64.urlsafe_b64decode(token)), 24)


class RetryPolicyTest(unittest.TestCase):
    def test_backoff_doubles_up_to_the_maximum(self):
        policy = RetryPolicy()
        self.assertEqual((policy.max_attempts, policy.initial_backoff, policy.max_backoff), (4, 0.05, 1.0))
        self.assertEqual([policy.backoff(n) for n in range(1, 7)], [0.05, 0.1, 0.2, 0.4, 0.8, 1.0])

    def test_rejects_nonsense(self):
        with self.assertRaises(ValueError):
            RetryPolicy(max_attempts=0)
        with self.assertRaises(ValueError):
            RetryPolicy(initial_backoff=2.0, max_backoff=1.0)


class AcquireTest(FakeServerCase, unittest.TestCase):
    def test_unavailable_is_retried_with_the_same_token_and_the_wait_left(self):
        def once_unavailable(request, context, n):
            if n == 1:
                context.abort(grpc.StatusCode.UNAVAILABLE, "only 2 of 5 Redis nodes answered")
            return self.fake.grant(request, context, n)

        self.fake.on_acquire = once_unavailable
        lease = self.client.acquire("orders/1", ttl=10, wait=2)

        (first, _), (second, _) = self.fake.acquires
        self.assertRegex(first.token, TOKEN_SHAPE)
        self.assertEqual(first.token, second.token)
        self.assertEqual(from_proto(first.wait), 2.0)
        self.assertLess(from_proto(second.wait), 2.0)
        self.assertGreater(from_proto(second.wait), 1.0)
        self.assertEqual(from_proto(first.ttl), 10.0)
        self.assertRegex(first.owner, r" pid \d+$")
        self.assertTrue(lease.valid)
        self.assertEqual(lease.fencing_token, 100)
        # A new lease gets a new token.
        self.client.acquire("orders/2", ttl=10)
        self.assertNotEqual(self.fake.acquires[2][0].token, first.token)

    def test_deadline_exceeded_is_retried_with_the_same_token(self):
        def first_answer_too_late(request, context, n):
            if n == 1:
                over = threading.Event()
                context.add_callback(over.set)
                over.wait(5)  # until the client's deadline has ended the call
            return self.fake.grant(request, context, n)

        self.fake.on_acquire = first_answer_too_late
        client = self.make_client(call_timeout=0.2)
        lease = client.acquire("orders/1", ttl=10)
        self.assertTrue(lease.valid)
        self.assertEqual(len(self.fake.acquires), 2)
        self.assertEqual(self.fake.acquires[0][0].token, self.fake.acquires[1][0].token)

    def test_unavailable_is_retried_until_the_call_deadline_then_the_token_is_given_back(self):
        def always_unavailable(request, context, n):
            context.abort(grpc.StatusCode.UNAVAILABLE, "only 2 of 5 Redis nodes answered")

        self.fake.on_acquire = always_unavailable
        client = self.make_client(call_timeout=0.3, retry=RetryPolicy(
            max_attempts=3, initial_backoff=0.01, max_backoff=0.01))
        start = time.monotonic()
        with self.assertRaises(LockServiceError) as caught:
            client.acquire("orders/1", ttl=10, wait=0.2)
        elapsed = time.monotonic() - start
        self.assertNotIsInstance(caught.exception, LockNotAcquired)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        # Until the Acquire's own deadline (wait + call timeout), not for the policy's 3 attempts.
        self.assertGreater(len(self.fake.acquires), 3)
        self.assertGreater(elapsed, 0.5 - 0.01 - 0.05)  # the last backoff would have ended past it
        self.assertLess(elapsed, 0.5 + 1.0)
        self.assertEqual(len({r.token for r, _ in self.fake.acquires}), 1)
        self.assertTrue(self.fake.wait_for(lambda: self.fake.releases), "no Release of the given-up token")
        self.assertEqual(self.fake.releases[0].token, self.fake.acquires[0][0].token)
        self.assertEqual(self.fake.releases[0].resource, "orders/1")

    def test_a_policy_of_one_attempt_retries_nothing(self):
        def always_unavailable(request, context, n):
            context.abort(grpc.StatusCode.UNAVAILABLE, "only 2 of 5 Redis nodes answered")

        self.fake.on_acquire = always_unavailable
        client = self.make_client(retry=RetryPolicy.none())
        with self.assertRaises(LockServiceError) as caught:
            client.acquire("orders/1", ttl=10)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(len(self.fake.acquires), 1)

    def test_aborted_is_lock_not_acquired_and_not_retried(self):
        def held(request, context, n):
            context.abort(grpc.StatusCode.ABORTED, f"resource '{request.resource}' is held by another owner")

        self.fake.on_acquire = held
        with self.assertRaises(LockNotAcquired) as caught:
            self.client.acquire("orders/1", ttl=10, wait=0.3)
        self.assertEqual(caught.exception.code, grpc.StatusCode.ABORTED)
        self.assertIn("orders/1", str(caught.exception))
        self.assertEqual(len(self.fake.acquires), 1)
        self.assertIsNone(self.client.try_acquire("orders/1", ttl=10))
        self.assertEqual(len(self.fake.acquires), 2)

    def test_invalid_argument_is_a_service_error_and_not_retried(self):
        def invalid(request, context, n):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "resource must not be empty")

        self.fake.on_acquire = invalid
        with self.assertRaises(LockServiceError) as caught:
            self.client.acquire("", ttl=10)
        self.assertIs(type(caught.exception), LockServiceError)
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(caught.exception.details, "resource must not be empty")
        self.assertEqual(str(caught.exception), "INVALID_ARGUMENT: resource must not be empty")
        self.assertEqual(len(self.fake.acquires), 1)

    def test_deadline_counts_from_the_send_time(self):
        def slow_answer(request, context, n):
            threading.Event().wait(0.3)  # the answer spends 300 ms on its way
            return self.fake.grant(request, context, n, validity=2.0)

        self.fake.on_acquire = slow_answer
        before = time.monotonic()
        lease = self.client.acquire("orders/1", ttl=2)
        after = time.monotonic()
        received = self.fake.acquires[0][1]
        self.assertGreaterEqual(lease.deadline, before + 2.0)
        self.assertLessEqual(lease.deadline, received + 2.0)
        self.assertLess(lease.deadline, after + 2.0 - 0.25)
        self.assertLessEqual(lease.remaining, lease.deadline - 0.1 - after)  # guard = min(2/20, 0.1)
        self.assertEqual(len(self.fake.acquires), 1)

    def test_a_grant_with_less_than_half_its_validity_left_is_asked_again(self):
        def first_late(request, context, n):
            if n == 1:
                threading.Event().wait(0.3)  # 0.3 of a 0.5 s validity gone on the way
            return self.fake.grant(request, context, n, validity=0.5)

        self.fake.on_acquire = first_late
        lease = self.client.acquire("orders/1", ttl=0.5)
        self.assertEqual(len(self.fake.acquires), 2)
        self.assertEqual(self.fake.acquires[0][0].token, self.fake.acquires[1][0].token)
        self.assertGreater(lease.deadline - self.fake.acquires[1][1], 0.4)
        self.assertTrue(lease.valid)


if __name__ == "__main__":
    unittest.main()
