"""Elections: campaign, the leadership's deadline, guard, loss, resign and proclaim, leader and
observe (conformance rules 10-13), against the fake ElectionService."""
import threading
import time
import unittest

import grpc

from fakeserver import FakeServerCase, ManualClock, campaign_answer
from redlockd import Leader, Leadership, LeaseLost, LockNotAcquired, LockServiceError
from redlockd._proto import election_pb2


def until_half_closed(requests):
    for _ in requests:
        pass


def leader_state(value, term):
    return election_pb2.ObserveResponse(leader=election_pb2.Leadership(value=value, term=term))


NO_LEADER = election_pb2.ObserveResponse()


class CampaignTest(FakeServerCase, unittest.TestCase):
    def test_requests_go_out_at_once_and_every_quarter_ttl_while_waiting(self):
        def script(requests, context):
            seen = [next(requests) for _ in range(4)]  # waiting: no answer yet
            yield campaign_answer(seen[-1], 77, validity=0.4)
            until_half_closed(requests)

        self.elections.on_campaign = script
        start = time.monotonic()
        leadership = self.client.campaign("scheduler", "10.0.0.7", ttl=0.4)
        self.assertIsInstance(leadership, Leadership)
        requests = self.elections.campaign_requests
        first, first_at = requests[0]
        self.assertEqual((first.election, first.value, first.sequence), ("scheduler", "10.0.0.7", 1))
        self.assertAlmostEqual(first.ttl.ToNanoseconds() / 1e9, 0.4)
        self.assertLess(first_at - start, 0.5)  # at once, not after a period
        self.assertEqual([r.sequence for r, _ in requests[:4]], [1, 2, 3, 4])
        self.assertTrue(all(r.election == "scheduler" and r.value == "10.0.0.7" for r, _ in requests[:4]))
        self.assertGreater(requests[3][1] - requests[0][1], 3 * 0.1 * 0.8)  # every ttl/4
        # Dated by the fourth request (the one echoed), not the first one.
        fourth_at = requests[3][1]
        self.assertLessEqual(leadership.deadline, fourth_at + 0.4)
        self.assertGreater(leadership.deadline, requests[2][1] + 0.4)
        self.assertEqual((leadership.election, leadership.term, leadership.value), ("scheduler", 77, "10.0.0.7"))
        self.assertTrue(leadership.resign())

    def test_the_deadline_moves_only_forward_and_only_by_known_sequences(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 9, validity=0.5)
            second = next(requests)
            yield campaign_answer(second, 9, validity=0.5)
            third = next(requests)
            # Each request answered at once (within the silence bound), the third three times:
            yield campaign_answer(third, 9, validity=60, sequence=999)  # cannot be dated
            yield campaign_answer(third, 9, validity=0.5)
            yield campaign_answer(second, 9, validity=0.5)  # older, arriving late
            until_half_closed(requests)

        self.elections.on_campaign = script
        leadership = self.client.campaign("e", "v", ttl=0.5)
        # All five answers processed: the grant, the second's, the undatable one, the third's,
        # the second's again.
        self.assertTrue(self.answered.wait_count(5))
        second_at = self.elections.campaign_requests[1][1]
        third_at = self.elections.campaign_requests[2][1]
        self.assertLessEqual(leadership.deadline, third_at + 0.5)
        self.assertGreater(leadership.deadline, second_at + 0.5)
        self.assertLess(leadership.deadline, time.monotonic() + 1)  # the 60 s answer moved nothing
        self.assertTrue(leadership.resign())

    def test_an_answer_it_cannot_date_does_not_make_it_leader(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 3, validity=60, sequence=12345)
            second = next(requests)
            yield campaign_answer(second, 3, validity=0.4)
            until_half_closed(requests)

        self.elections.on_campaign = script
        leadership = self.client.campaign("e", "v", ttl=0.4)
        second_at = self.elections.campaign_requests[1][1]
        self.assertLessEqual(leadership.deadline, second_at + 0.4)
        leadership.resign()

    def test_the_term_is_kept_as_an_exact_uint64(self):
        top = 2 ** 64 - 1

        def script(requests, context):
            for request in requests:
                yield campaign_answer(request, top)

        self.elections.on_campaign = script
        with self.client.campaign("e", "v", ttl=10) as leadership:
            self.assertEqual(leadership.term, top)
            self.assertIn(str(top), repr(leadership))

    def test_the_term_follows_a_renewal_that_reports_a_higher_one_and_never_falls(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 4, validity=10)
            yield campaign_answer(first, 9, validity=10)  # a renewal after a node fault
            yield campaign_answer(first, 5, validity=10)  # an older report, arriving late
            until_half_closed(requests)

        self.elections.on_campaign = script
        leadership = self.client.campaign("scheduler", "a", ttl=10)
        self.assertTrue(self.answered.wait_count(3))  # the older report came, and changed nothing
        self.assertEqual(leadership.term, 9)
        self.assertTrue(leadership.resign())

    def test_the_guard_and_the_timer_report_the_loss_once_before_the_deadline(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=0.6)
            until_half_closed(requests)  # no renewals answered

        self.elections.on_campaign = script
        clock = ManualClock()  # a busy machine's timer lateness is not under test
        leadership = self.make_client(_clock=clock).campaign("e", "v", ttl=2)  # guard 100 ms
        calls = []
        fired = threading.Event()

        def lost(error):
            calls.append((clock.now(), error))
            fired.set()

        leadership.on_lost(lost)
        clock.advance(leadership.deadline - 0.1 - clock.now() - 0.001)  # just before the guard
        self.assertTrue(leadership.is_leader)
        self.assertFalse(fired.is_set())
        clock.advance(0.001)  # the guarded deadline
        self.assertFalse(leadership.is_leader)
        self.assertTrue(fired.wait(5))
        at, error = calls[0]
        self.assertGreaterEqual(at, leadership.deadline - 0.1)
        self.assertLess(at, leadership.deadline)  # before the deadline itself
        self.assertIsInstance(error, LeaseLost)
        self.assertEqual(error.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        # The leadership is given back (half-closed: the server resigns it), and the stream's
        # end reports nothing a second time.
        self.assertTrue(self.elections.wait_for(lambda: self.elections.campaign_ends == ["half-closed"]), self.elections.campaign_ends)
        self.assertIsNotNone(leadership._stream.wait_end(5))  # the end was processed too
        self.assertEqual(len(calls), 1)
        late = []
        leadership.on_lost(late.append)
        self.assertEqual(late, [error])
        self.assertFalse(leadership.resign())

    def test_a_stream_error_fires_the_loss_once(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=0.5)
            context.abort(grpc.StatusCode.NOT_FOUND, "leadership of election 'e' is not held")

        self.elections.on_campaign = script
        clock = ManualClock()
        leadership = self.make_client(_clock=clock).campaign("e", "v", ttl=0.5)
        calls = []
        fired = threading.Event()
        leadership.on_lost(lambda e: (calls.append(e), fired.set()))
        self.assertTrue(fired.wait(5))
        self.assertEqual(calls[0].code, grpc.StatusCode.NOT_FOUND)
        self.assertFalse(leadership.is_leader)
        clock.advance(1)  # past the deadline: a timer still pending would run now, here
        self.assertEqual(len(calls), 1)
        with self.assertRaises(LeaseLost) as caught:
            leadership.proclaim("w")
        self.assertIs(caught.exception, calls[0])
        self.assertFalse(leadership.resign())

    def test_a_stream_ending_ok_unasked_is_a_loss(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=10)

        self.elections.on_campaign = script
        leadership = self.client.campaign("jobs", "v", ttl=10)
        errors = []
        fired = threading.Event()
        leadership.on_lost(lambda e: (errors.append(e), fired.set()))
        self.assertTrue(fired.wait(5))
        self.assertEqual(len(errors), 1)
        self.assertEqual(errors[0].code, grpc.StatusCode.UNAVAILABLE)
        self.assertIn("jobs", str(errors[0]))
        self.assertFalse(leadership.is_leader)

    def test_resign_half_closes_once_and_reports_no_loss(self):
        self.elections.on_campaign = lambda requests, context: self._lead_then_answer_once(requests, 0.4)
        clock = ManualClock()
        leadership = self.make_client(_clock=clock).campaign("e", "v", ttl=0.4)
        errors = []
        leadership.on_lost(errors.append)
        self.assertTrue(leadership.is_leader)
        self.assertTrue(leadership.resign())
        self.assertEqual(self.elections.campaign_ends, ["half-closed"])
        self.assertFalse(leadership.is_leader)
        self.assertFalse(leadership.resign())
        clock.advance(1)  # past the old deadline: a timer still pending would run now, here
        self.assertEqual(errors, [])
        self.assertIn("resigned", repr(leadership))
        with self.assertRaises(LeaseLost):
            leadership.proclaim("w")

    def _lead_then_answer_once(self, requests, validity):
        first = next(requests)
        yield campaign_answer(first, 5, validity=validity)
        until_half_closed(requests)

    def test_resign_is_false_when_the_stream_ends_otherwise(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=10)
            until_half_closed(requests)
            context.abort(grpc.StatusCode.NOT_FOUND, "leadership of election 'e' is not held")

        self.elections.on_campaign = script
        leadership = self.client.campaign("e", "v", ttl=10)
        errors = []
        leadership.on_lost(errors.append)
        self.assertFalse(leadership.resign())
        self.assertFalse(leadership.resign())
        self.assertEqual(errors, [])

    def test_leaving_the_block_resigns(self):
        with self.client.campaign("e", "v", ttl=10) as leadership:
            self.assertTrue(leadership.is_leader)
        self.assertFalse(leadership.is_leader)
        self.assertTrue(self.elections.wait_for(lambda: self.elections.campaign_ends == ["half-closed"]))

    def test_proclaim_sends_the_value_and_returns_when_an_answer_shows_it(self):
        self.elections.on_campaign = self.elections.lead_at_once
        leadership = self.client.campaign("e", "old", ttl=0.4)
        term = leadership.term
        leadership.proclaim("new")
        self.assertEqual(leadership.value, "new")
        self.assertEqual(leadership.term, term)
        requests = self.elections.campaign_requests
        proclaimed = [r for r, _ in requests if r.value == "new"]
        self.assertTrue(proclaimed)
        self.assertEqual(proclaimed[0].election, "e")
        self.assertAlmostEqual(proclaimed[0].ttl.ToNanoseconds() / 1e9, 0.4)
        sequences = [r.sequence for r, _ in requests]
        self.assertEqual(sequences, sorted(set(sequences)))  # rising, none reused
        # The periodic requests that follow carry the new value as well.
        count = len(requests)
        self.assertTrue(self.elections.wait_for(lambda: len(self.elections.campaign_requests) >= count + 2))
        self.assertTrue(all(r.value == "new" for r, _ in self.elections.campaign_requests[count:]))
        self.assertEqual(leadership.value, "new")
        self.assertTrue(leadership.resign())

    def test_a_proclaims_answer_is_dated_by_the_proclaim_sent_and_the_proclaim_moves_nothing(self):
        # Issue 40's campaign-handover finding: a belief that outlived the key after a proclaim.
        proclaimed, answer_now = threading.Event(), threading.Event()

        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=2)
            for request in requests:  # periodic requests go unanswered
                if request.value == "a2":
                    proclaimed.set()
                    answer_now.wait(5)  # the answer is on its way while time passes
                    yield campaign_answer(request, 5, validity=2)
                    until_half_closed(requests)
                    return

        self.elections.on_campaign = script
        clock = ManualClock()
        leadership = self.make_client(_clock=clock).campaign("e", "a", ttl=2)
        led_until = leadership.deadline
        clock.advance(0.2)
        sent = clock.now()
        proclaiming = threading.Thread(target=leadership.proclaim, args=("a2",))
        proclaiming.start()
        self.assertTrue(proclaimed.wait(5))
        clock.advance(0.25)  # less than the silence bound (ttl/4) since any unanswered request
        self.assertEqual(leadership.deadline, led_until)  # sending a proclaim moves nothing
        answer_now.set()
        proclaiming.join(5)
        self.assertFalse(proclaiming.is_alive())
        self.assertEqual(leadership.value, "a2")
        self.assertEqual(leadership.deadline, sent + 2)  # from the send, not from the arrival
        self.assertTrue(leadership.resign())

    def test_proclaim_fails_after_the_call_timeout_when_no_answer_shows_the_value(self):
        def script(requests, context):
            for request in requests:
                yield campaign_answer(request, 5, value="stubborn")

        self.elections.on_campaign = script
        client = self.make_client(call_timeout=0.3)
        leadership = client.campaign("e", "stubborn", ttl=10)
        start = time.monotonic()
        with self.assertRaises(LockServiceError) as caught:
            leadership.proclaim("new")
        self.assertGreaterEqual(time.monotonic() - start, 0.29)
        self.assertEqual(caught.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertEqual(leadership.value, "stubborn")
        self.assertTrue(leadership.is_leader)
        leadership.resign()

    def test_proclaim_fails_with_the_loss_when_the_leadership_is_lost_first(self):
        def script(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=10)
            for request in requests:
                if request.value == "new":
                    context.abort(grpc.StatusCode.NOT_FOUND, "leadership of election 'e' is not held")

        self.elections.on_campaign = script
        leadership = self.client.campaign("e", "v", ttl=10)
        errors = []
        leadership.on_lost(errors.append)
        with self.assertRaises(LeaseLost) as caught:
            leadership.proclaim("new")
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(errors, [caught.exception])

    def test_a_wait_that_passes_half_closes_and_raises_not_acquired(self):
        def script(requests, context):
            until_half_closed(requests)  # never leads
            return
            yield  # pragma: no cover

        self.elections.on_campaign = script
        start = time.monotonic()
        with self.assertRaises(LockNotAcquired) as caught:
            self.client.campaign("e", "v", ttl=0.2, wait=0.25)
        elapsed = time.monotonic() - start
        self.assertGreaterEqual(elapsed, 0.25)
        self.assertLess(elapsed, 2)
        self.assertEqual(caught.exception.code, grpc.StatusCode.ABORTED)
        self.assertIn("'e'", str(caught.exception))
        self.assertEqual(self.elections.campaign_ends, ["half-closed"])  # withdrawn, not cancelled
        # It kept sending while waiting.
        self.assertGreaterEqual(len(self.elections.campaign_requests), 4)

    def test_a_grant_after_the_wait_passed_is_not_returned_but_resigned(self):
        seen_after = []

        def script(requests, context):
            first = next(requests)
            time.sleep(0.35)  # past the client's wait
            yield campaign_answer(first, 5, validity=10)
            seen_after.extend(requests)  # until the half-close that resigns it

        self.elections.on_campaign = script
        with self.assertRaises(LockNotAcquired):
            self.client.campaign("e", "v", ttl=10, wait=0.2)
        self.assertTrue(self.elections.wait_for(lambda: self.elections.campaign_ends == ["half-closed"]))

    def test_a_stream_ending_before_leading_is_the_service_error(self):
        def script(requests, context):
            next(requests)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "election is empty")
            yield  # pragma: no cover

        self.elections.on_campaign = script
        with self.assertRaises(LockServiceError) as caught:
            self.client.campaign("", "v", ttl=10)
        self.assertNotIsInstance(caught.exception, LockNotAcquired)
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(caught.exception.details, "election is empty")

    def test_string_form(self):
        with self.client.campaign("scheduler", "10.0.0.7", ttl=10) as leadership:
            text = str(leadership)
            for part in ("scheduler", str(leadership.term), "10.0.0.7", "is_leader=True"):
                self.assertIn(part, text)


class LeaderTest(FakeServerCase, unittest.TestCase):
    def test_leader_or_none(self):
        self.elections.on_leader = lambda request, context, n: election_pb2.LeaderResponse(
            leader=election_pb2.Leadership(value="10.0.0.7", term=2 ** 63 + 5))
        self.assertEqual(self.client.leader("scheduler"), Leader("10.0.0.7", 2 ** 63 + 5))
        self.assertEqual(self.elections.leader_calls[0].election, "scheduler")
        self.elections.on_leader = lambda request, context, n: election_pb2.LeaderResponse()
        self.assertIsNone(self.client.leader("scheduler"))

    def test_unavailable_is_retried(self):
        def flaky(request, context, n):
            if n < 3:
                context.abort(grpc.StatusCode.UNAVAILABLE, "only 1 of 3 Redis nodes answered")
            return election_pb2.LeaderResponse(leader=election_pb2.Leadership(value="v", term=4))

        self.elections.on_leader = flaky
        self.assertEqual(self.client.leader("e"), Leader("v", 4))
        self.assertEqual(len(self.elections.leader_calls), 3)

    def test_invalid_argument_is_not_retried(self):
        def invalid(request, context, n):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "election is empty")

        self.elections.on_leader = invalid
        with self.assertRaises(LockServiceError) as caught:
            self.client.leader("")
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(len(self.elections.leader_calls), 1)


class ObserveTest(FakeServerCase, unittest.TestCase):
    def observe(self, expected_count, timeout=5.0):
        events = []
        changed = threading.Condition()

        def callback(state):
            with changed:
                events.append(state)
                changed.notify_all()

        observation = self.client.observe("scheduler", callback)
        with changed:
            changed.wait_for(lambda: len(events) >= expected_count, timeout)
        return observation, events

    def test_the_current_state_then_every_change(self):
        def script(request, context, n):
            yield NO_LEADER
            yield leader_state("a", 5)
            yield leader_state("a2", 5)
            yield NO_LEADER
            while context.is_active():
                time.sleep(0.01)

        self.elections.on_observe = script
        observation, events = self.observe(4)
        observation.close()
        self.assertEqual(events, [None, Leader("a", 5), Leader("a2", 5), None])
        self.assertEqual(self.elections.observe_calls[0][0].election, "scheduler")
        self.assertEqual(len(self.elections.observe_calls), 1)

    def test_a_reopened_stream_delivers_only_new_states_in_term_order(self):
        def script(request, context, n):
            if n == 1:
                yield NO_LEADER
                yield leader_state("a", 5)
                context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")
            elif n == 2:
                yield leader_state("a", 5)  # as before the reopen: not delivered again
                yield leader_state("z", 3)  # an older term than one seen: dropped
                yield leader_state("b", 6)
                context.abort(grpc.StatusCode.INTERNAL, "broken")
            else:
                yield leader_state("b", 6)
                yield NO_LEADER
                while context.is_active():
                    time.sleep(0.01)

        self.elections.on_observe = script
        observation, events = self.observe(4)
        self.assertTrue(self.answered.wait_count(7))  # every state sent was processed
        observation.close()
        self.assertEqual(events, [None, Leader("a", 5), Leader("b", 6), None])
        calls = self.elections.observe_calls
        self.assertEqual(len(calls), 3)
        # Reopened after the retry policy's backoff (FAST_RETRY: 10 ms first).
        self.assertGreaterEqual(calls[1][1] - calls[0][1], 0.01)

    def test_it_reopens_without_a_limit_on_attempts(self):
        def script(request, context, n):
            if n <= 6:  # more than the policy's 4 attempts
                context.abort(grpc.StatusCode.UNAVAILABLE, "no quorum")
            yield leader_state("a", 7)
            while context.is_active():
                time.sleep(0.01)

        self.elections.on_observe = script
        observation, events = self.observe(1)
        observation.close()
        self.assertEqual(events, [Leader("a", 7)])
        self.assertEqual(len(self.elections.observe_calls), 7)

    def test_no_callback_runs_after_close_returns(self):
        def script(request, context, n):
            term = 1
            while context.is_active():
                yield leader_state("v", term)
                term += 1
                time.sleep(0.002)

        self.elections.on_observe = script
        running = threading.Event()
        after_close = []
        closed = threading.Event()

        inside = threading.Event()

        def slow(state):
            inside.set()
            running.set()
            if closed.is_set():
                after_close.append(state)
            time.sleep(0.05)
            inside.clear()

        observation = self.client.observe("e", slow)
        self.assertTrue(running.wait(5))
        observation.close()
        self.assertFalse(inside.is_set())  # close waited for the callback under way
        closed.set()
        observation._thread.join(5)  # its reader ended: nothing can call back any more
        self.assertFalse(observation._thread.is_alive())
        self.assertEqual(after_close, [])
        # A second close is harmless, and the stream was cancelled, not reopened.
        observation.close()
        self.assertEqual(len(self.elections.observe_calls), 1)

    def test_close_from_the_callback_and_as_a_context_manager(self):
        def script(request, context, n):
            term = 1
            while context.is_active():
                yield leader_state("v", term)
                term += 1
                time.sleep(0.005)

        self.elections.on_observe = script
        events = []
        holder = {}
        ready = threading.Event()
        done = threading.Event()

        def close_at_once(state):
            ready.wait(5)
            events.append(state)
            holder["o"].close()  # must not deadlock
            done.set()

        holder["o"] = self.client.observe("e", close_at_once)
        ready.set()
        self.assertTrue(done.wait(5))
        holder["o"]._thread.join(5)
        self.assertFalse(holder["o"]._thread.is_alive())
        self.assertEqual(len(events), 1)
        with self.client.observe("e", lambda state: None) as observation:
            self.assertIn("open", repr(observation))
        self.assertIn("closed", repr(observation))


if __name__ == "__main__":
    unittest.main()
