"""The sync client's lead() and observation as an iterator, against the fake ElectionService.
Losses come from a clock the test moves (ManualClock), not from sleeping past a deadline."""
import itertools
import threading
import unittest

import grpc

from fakeserver import FakeServerCase, ManualClock, campaign_answer
from redlockd import Leader, LeaderStream, LeaseLost
from redlockd._proto import election_pb2


def until_half_closed(requests):
    for _ in requests:
        pass


def leader_state(value, term):
    return election_pb2.ObserveResponse(leader=election_pb2.Leadership(value=value, term=term))


class LeadTest(FakeServerCase, unittest.TestCase):
    def test_the_work_runs_while_leading_then_it_resigns_and_returns_the_result(self):
        seen = []

        def work(leadership):
            seen.append((leadership.is_leader, leadership.lost.is_set()))
            return leadership.term

        self.assertEqual(self.client.lead("e", "v", 2, work), 500)
        self.assertEqual(seen, [(True, False)])
        self.assertEqual(self.elections.campaign_ends, ["half-closed"])

    def test_lost_is_set_at_the_guarded_deadline_and_lead_raises_the_loss(self):
        def answer_once(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=2)
            until_half_closed(requests)

        self.elections.on_campaign = answer_once
        clock = ManualClock()
        client = self.make_client(_clock=clock)
        leading = threading.Event()
        told = {}

        def work(leadership):
            told["leadership"] = leadership
            leading.set()
            self.assertTrue(leadership.lost.wait(5))
            told["at"] = clock.now()
            return "gave up"

        outcome = {}

        def run():
            try:
                client.lead("e", "v", 2, work)
            except LeaseLost as e:
                outcome["error"] = e

        runner = threading.Thread(target=run)
        runner.start()
        self.assertTrue(leading.wait(5))
        leadership = told["leadership"]
        clock.advance(2 - 0.1 - 0.001)  # just before the guard (ttl/20 = 100 ms) before the deadline
        self.assertFalse(leadership.lost.is_set())
        self.assertTrue(leadership.is_leader)
        clock.advance(0.001)  # the guarded deadline: the timer declares the loss
        runner.join(5)
        self.assertFalse(runner.is_alive())
        self.assertIs(outcome["error"], leadership.lost_error)
        self.assertEqual(outcome["error"].code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertLess(told["at"], leadership.deadline)

    def test_with_requeue_it_campaigns_again_after_a_loss(self):
        streams = []

        def script(requests, context):
            first = next(requests)
            streams.append(first.token)
            if len(streams) == 1:
                yield campaign_answer(first, 5, validity=10)
                context.abort(grpc.StatusCode.NOT_FOUND, "taken over")
            for request in itertools.chain([first], requests):
                yield campaign_answer(request, 9, validity=10)

        self.elections.on_campaign = script
        terms = []

        def work(leadership):
            terms.append(leadership.term)
            if len(terms) == 1:
                self.assertTrue(leadership.lost.wait(5))
                return "told"
            return "done"

        self.assertEqual(self.client.lead("e", "v", 10, work, requeue=True), "done")
        self.assertEqual(terms, [5, 9])
        self.assertNotEqual(streams[0], streams[1])

    def test_without_requeue_a_loss_the_work_raised_itself_is_the_loss(self):
        def ended(requests, context):
            first = next(requests)
            yield campaign_answer(first, 5, validity=10)
            context.abort(grpc.StatusCode.NOT_FOUND, "taken over")

        self.elections.on_campaign = ended

        def work(leadership):
            self.assertTrue(leadership.lost.wait(5))
            raise leadership.lost_error

        with self.assertRaises(LeaseLost) as caught:
            self.client.lead("e", "v", 10, work)
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_an_error_of_the_work_resigns_and_is_raised(self):
        def work(leadership):
            raise ValueError("bad")

        with self.assertRaises(ValueError):
            self.client.lead("e", "v", 2, work)
        self.assertEqual(self.elections.campaign_ends, ["half-closed"])


class LeaderStreamTest(FakeServerCase, unittest.TestCase):
    def test_an_iterator_of_the_news_that_closing_ends(self):
        def script(request, context, n):
            yield election_pb2.ObserveResponse()
            yield leader_state("a", 5)
            yield leader_state("a", 5)  # no news
            yield leader_state("b", 6)
            while context.is_active():
                threading.Event().wait(0.01)

        self.elections.on_observe = script
        seen = []
        with self.client.observe("scheduler") as changes:
            self.assertIsInstance(changes, LeaderStream)
            for leader in changes:
                seen.append(leader)
                if len(seen) == 3:
                    break
        self.assertEqual(seen, [None, Leader("a", 5), Leader("b", 6)])
        self.assertEqual(list(changes), [])  # closed: nothing more
        self.assertIn("closed", repr(changes))

    def test_close_from_another_thread_ends_a_blocked_iteration(self):
        self.elections.on_observe = lambda request, context, n: self.elections.hold_open(request, context, n)
        changes = self.client.observe("e")
        self.assertIsNone(next(changes))  # the first state: no leader
        ended = threading.Event()

        def read_on():
            for _ in changes:
                pass
            ended.set()

        reader = threading.Thread(target=read_on)
        reader.start()
        self.assertTrue(self.elections.wait_for(lambda: len(self.elections.observe_calls) == 1))
        changes.close()
        self.assertTrue(ended.wait(5))
        reader.join(5)
        self.assertEqual(len(self.elections.observe_calls), 1)  # closed, not reopened


if __name__ == "__main__":
    unittest.main()
