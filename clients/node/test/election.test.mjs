import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { onAnswerProcessed } from '../dist/testing.js';
import { LeaseLostError, Leadership, LockClient, LockNotAcquiredError, LockServiceError } from '../dist/index.js';
import {
  duration, eventually, failure, manualClock, millis, recordAnswers, settled, sleep, startFake, status,
} from './fake-server.mjs';

async function setup(t, handlers, opts = {}) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry: { maxAttempts: 3, initialBackoffMs: 5, maxBackoffMs: 20 }, ...opts });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

/** A Campaign answer: leading with `term`, the request's value, `validityMs`, echoing `sequence`. */
function lead(stream, request, validityMs, { term = '9', sequence = request.sequence, value = request.value } = {}) {
  stream.write({ term, value, validity: duration(validityMs), state: 'LEASE_STATE_HELD', sequence });
}

test('campaign: one stream, the first request at once, then every ttl/4 while waiting too; leads on the first answer', async (t) => {
  const { fake, client } = await setup(t, {
    campaign(stream, request, n) {
      if (n === 3) lead(stream, request, 2000, { term: '18446744073709551615' }); // the largest uint64
    },
  });
  const started = performance.now();
  const leadership = await client.campaign('jobs', 'host-1', { ttlMs: 2000 }); // a request every 500 ms
  const elapsed = performance.now() - started;
  assert.ok(leadership instanceof Leadership);
  assert.ok(elapsed >= 950, `led on the third request, after ${elapsed} ms`);
  assert.equal(fake.seen.campaignStreams.length, 1, 'one stream');
  const requests = fake.seen.campaign.slice(0, 3);
  assert.ok(requests[0].at - started < 400, `the first request goes out at once (${requests[0].at - started} ms)`);
  requests.forEach(({ request }, i) => {
    assert.equal(request.election, 'jobs');
    assert.equal(request.value, 'host-1');
    assert.equal(millis(request.ttl), 2000);
    assert.equal(request.sequence, String(i + 1));
  });
  const gaps = requests.slice(1).map((r, i) => r.at - requests[i].at);
  // The first gap may be short by the time the stream took to connect.
  assert.ok(gaps[0] > 150 && gaps[0] < 800 && gaps[1] > 350 && gaps[1] < 700, `requests every ttl/4 while waiting: ${gaps}`);
  assert.equal(leadership.election, 'jobs');
  assert.equal(leadership.term, 18446744073709551615n, 'the term kept exactly, as a bigint');
  assert.equal(leadership.value, 'host-1');
  assert.ok(leadership.isLeader);
  assert.equal(await leadership.resign(), true);
});

test('the deadline is dated by the echoed sequence: send time + validity, only forward, unknown sequences ignored', async (t) => {
  let stream;
  const { client } = await setup(t, {
    campaign(s, request, n) {
      stream = s;
      // An answer this client cannot date (a sequence it never sent) does not make it leader.
      if (n === 2) lead(s, request, 3000, { sequence: '999' });
      // Answer the third request with an echo of the first: a leader that waited is dated by it.
      if (n === 3) setTimeout(() => lead(s, request, 3000, { sequence: '1' }), 100);
    },
  });
  const started = performance.now();
  const leadership = await client.campaign('dated', 'v', { ttlMs: 400 }); // a request every 100 ms
  const answeredAt = performance.now();
  const first = stream.requests[0];
  assert.ok(leadership.deadline >= started + 3000, 'counted from the send time of request 1');
  assert.ok(leadership.deadline <= first.at + 3000, 'not later than request 1 arrived');
  assert.ok(leadership.deadline <= answeredAt + 3000 - 250, 'not from the answer');
  const dated = leadership.deadline;

  const answers = recordAnswers(t); // the client processed them: not a sleep that passes if they never came
  lead(stream, first.request, 10_000, { sequence: '999' }); // never sent
  lead(stream, first.request, 10_000, { sequence: '0' }); // no sequence
  await answers.processed(2);
  assert.equal(leadership.deadline, dated, 'an unknown sequence moves nothing');
  lead(stream, first.request, 1000, { sequence: '2' }); // later request, shorter validity: earlier deadline
  await answers.processed(3);
  assert.equal(leadership.deadline, dated, 'the deadline only moves forward');
  lead(stream, first.request, 3100, { sequence: '1' }); // the same request, longer validity: it does move
  await answers.processed(4);
  assert.ok(leadership.deadline > dated, 'the hook counts answers that are used as well');
  const moved = leadership.deadline;

  const count = stream.requests.length;
  assert.ok(await eventually(() => stream.requests.length > count));
  const last = stream.requests.at(-1);
  await sleep(150); // an answer that spends a while on its way
  const answeredLate = performance.now();
  lead(stream, last.request, 3000);
  assert.ok(await eventually(() => leadership.deadline !== moved));
  // Sent before it arrived (by less than 250 ms, even on a loaded machine).
  assert.ok(leadership.deadline <= last.at + 3000 && leadership.deadline >= last.at + 3000 - 250,
    `moved to that request's send time + validity (${leadership.deadline - (last.at + 3000)} ms from its arrival)`);
  assert.ok(leadership.deadline <= answeredLate + 3000 - 140, 'not from the answer');
  await leadership.resign();
});

test('the guard: without renewals the leadership is lost ttl/20 before its deadline, once, by the timer', async (t) => {
  const { client } = await setup(t, {
    campaign(stream, request, n) {
      if (n === 1) lead(stream, request, 600); // no renewal answers after the first
    },
  });
  const leadership = await client.campaign('guarded', 'v', { ttlMs: 4000 }); // guard 100 ms
  const calls = [];
  leadership.onLost((e) => calls.push({ at: performance.now(), e }));
  assert.ok(leadership.isLeader);
  assert.ok(await eventually(() => calls.length > 0, 1000));
  assert.ok(calls[0].e instanceof LeaseLostError);
  assert.equal(calls[0].e.codeName, 'DEADLINE_EXCEEDED');
  assert.ok(calls[0].at >= leadership.deadline - 100 - 1, 'not before the guard');
  assert.ok(calls[0].at < leadership.deadline, `before the deadline (${leadership.deadline - calls[0].at} ms margin)`);
  assert.equal(leadership.isLeader, false);
  assert.equal(leadership.signal.aborted, true);
  let late;
  leadership.onLost((e) => { late = e; });
  assert.equal(late, calls[0].e, 'a callback registered after the loss runs at once');
  assert.equal(await leadership.resign(), false, 'nothing to resign once lost');
});

test('on a manual clock: leading until exactly a guard before the deadline, lost at that instant, once', async (t) => {
  const clock = manualClock(t);
  const { client } = await setup(t, { campaign: (stream, request, n) => n === 1 && lead(stream, request, 600) });
  const sent = clock.now();
  const leadership = await client.campaign('manual', 'v', { ttlMs: 4000 }); // guard 100 ms
  assert.equal(leadership.deadline, sent + 600, 'the send time (the clock stood still) + validity');
  const calls = [];
  leadership.onLost((e) => calls.push({ at: clock.now(), e }));
  const aborts = [];
  leadership.signal.addEventListener('abort', () => aborts.push(clock.now()));
  clock.advanceTo(leadership.deadline - 100 - 1);
  assert.equal(leadership.isLeader, true, 'leading 1 ms before the guard');
  assert.equal(leadership.remainingMs, 1);
  assert.equal(calls.length, 0);
  clock.advance(1);
  assert.equal(calls.length, 1, 'lost at the guard, by the timer');
  assert.equal(calls[0].at, leadership.deadline - 100);
  assert.deepEqual(aborts, [leadership.deadline - 100], 'the signal aborted in the same instant');
  assert.equal(calls[0].e.codeName, 'DEADLINE_EXCEEDED');
  assert.equal(leadership.isLeader, false);
  assert.equal(leadership.remainingMs, 0);
  clock.advance(60_000);
  assert.equal(calls.length, 1, 'once');
  assert.equal(clock.pending, 0, 'no timer left');
});

test('isLeader holds until a guard (ttl/20, at most 100 ms) before the deadline', async (t) => {
  const { client } = await setup(t, { campaign: (stream, request, n) => n === 1 && lead(stream, request, 1000) });
  const leadership = await client.campaign('guard-check', 'v', { ttlMs: 4000 }); // guard 100 ms
  const guardStart = leadership.deadline - 100;
  let leadingBefore = 0;
  for (;;) {
    const before = performance.now();
    const leading = leadership.isLeader;
    const after = performance.now();
    if (after < guardStart) {
      assert.equal(leading, true, 'leading before the guard');
      leadingBefore += 1;
    } else if (before >= guardStart) {
      assert.equal(leading, false, 'not leading within the guard');
      break;
    }
    await sleep(1);
  }
  assert.ok(leadingBefore > 0);
  await leadership.resign();
});

test('a stream that ends NOT_FOUND is a loss, reported once', async (t) => {
  const clock = manualClock(t);
  const { client } = await setup(t, {
    campaign(stream, request, n) {
      lead(stream, request, 1000);
      if (n === 1) setTimeout(() => stream.emit('error', failure(status.NOT_FOUND, "election 'taken': the leadership was taken over")), 50);
    },
  });
  const leadership = await client.campaign('taken', 'v', { ttlMs: 1000 });
  const calls = [];
  leadership.onLost((e) => calls.push(e));
  assert.ok(await eventually(() => calls.length > 0));
  assert.equal(calls[0].codeName, 'NOT_FOUND');
  assert.equal(calls[0].resource, 'taken');
  assert.equal(leadership.isLeader, false);
  assert.equal(leadership.lostError, calls[0]);
  clock.advance(60_000); // past the deadline: the timer must not report it again
  assert.equal(calls.length, 1);
  assert.equal(clock.pending, 0, 'its timer was cleared');
});

test('a stream that ends OK without a resign is a loss (UNAVAILABLE), once', async (t) => {
  const clock = manualClock(t);
  const { client } = await setup(t, {
    campaign(stream, request, n) {
      lead(stream, request, 500);
      if (n === 1) setTimeout(() => stream.end(), 50);
    },
  });
  const leadership = await client.campaign('ended', 'v', { ttlMs: 500 });
  const calls = [];
  leadership.onLost((e) => calls.push(e));
  assert.ok(await eventually(() => calls.length > 0));
  assert.equal(calls[0].codeName, 'UNAVAILABLE');
  clock.advance(60_000);
  assert.equal(calls.length, 1);
  assert.equal(clock.pending, 0);
  assert.equal(leadership.isLeader, false);
});

test('resign half-closes and waits for the end: true once, then false; no loss after it', async (t) => {
  const clock = manualClock(t);
  let endWith = 'ok';
  const { fake, client } = await setup(t, {
    campaign: (stream, request) => lead(stream, request, 300),
    onCampaignEnd: (stream) => setTimeout(() => (endWith === 'ok'
      ? stream.end()
      : stream.emit('error', failure(status.NOT_FOUND, 'not held'))), 50),
  });
  const leadership = await client.campaign('resign', 'v', { ttlMs: 300 });
  let lost = 0;
  leadership.onLost(() => { lost += 1; });
  const started = performance.now();
  assert.equal(await leadership.resign(), true);
  assert.ok(performance.now() - started >= 45, 'waited for the end of the stream');
  assert.equal(fake.seen.campaignStreams[0].ended, true, 'half-closed');
  assert.equal(leadership.isLeader, false);
  assert.equal(await leadership.resign(), false, 'the second call');
  clock.advance(60_000); // past the deadline
  assert.equal(lost, 0, 'no loss after a resign');
  assert.equal(clock.pending, 0, 'no timer left to report one');
  assert.equal(fake.seen.campaignStreams.length, 1, 'no stream after a resign');
  let late = 0;
  leadership.onLost(() => { late += 1; });
  assert.equal(late, 0, 'nor for a callback registered after it');

  endWith = 'not-found';
  const other = await client.campaign('resign', 'v', { ttlMs: 300 });
  assert.equal(await other.resign(), false, 'an end other than OK');
  endWith = 'ok';
  const disposed = await client.campaign('resign', 'v', { ttlMs: 300 });
  await disposed[Symbol.asyncDispose](); // what `await using` calls
  assert.equal(fake.seen.campaignStreams[2].ended, true, 'disposing resigns');
  assert.equal(disposed.isLeader, false);
  assert.equal(await disposed.resign(), false, 'already resigned');
});

test('resign gives up after the call timeout when the stream does not end', async (t) => {
  const { client } = await setup(t, {
    campaign: (stream, request) => lead(stream, request, 1000),
    onCampaignEnd: () => {}, // never ends
  }, { callTimeoutMs: 150 });
  const leadership = await client.campaign('stuck', 'v', { ttlMs: 1000 });
  const started = performance.now();
  assert.equal(await leadership.resign(), false);
  const took = performance.now() - started;
  assert.ok(took >= 145 && took < 1000, `bounded by the call timeout: ${took} ms`);
  assert.equal(leadership.isLeader, false);
});

test('proclaim sends the new value with the same election and ttl and the next sequence, and returns when an answer shows it', async (t) => {
  const { fake, client } = await setup(t, {
    campaign(stream, request) {
      if (request.value === 'new') setTimeout(() => lead(stream, request, 2000), 80);
      else lead(stream, request, 2000);
    },
  });
  const leadership = await client.campaign('proclaim', 'old', { ttlMs: 2000 });
  const before = fake.seen.campaign.length;
  const started = performance.now();
  await leadership.proclaim('new');
  assert.ok(performance.now() - started >= 75, 'waited for an answer showing the value');
  const sent = fake.seen.campaign[before].request;
  assert.equal(sent.value, 'new');
  assert.equal(sent.election, 'proclaim');
  assert.equal(millis(sent.ttl), 2000);
  assert.equal(sent.sequence, String(before + 1));
  assert.equal(leadership.value, 'new');
  assert.equal(leadership.term, 9n, 'same term');
  // The renewals go on with the new value, not the old one: two renewals after the proclaim
  // (every ttl/4 = 500 ms), not a sleep that passes when none came.
  assert.ok(await eventually(() => fake.seen.campaign.length >= before + 3, 3000), 'renewals after the proclaim');
  assert.ok(fake.seen.campaign.slice(before).every((r) => r.request.value === 'new'));
  await leadership.resign();
  await assert.rejects(leadership.proclaim('again'), (e) => e instanceof LeaseLostError && e.codeName === 'FAILED_PRECONDITION');
});

test('proclaim fails with the loss when the leadership is lost first, and after the call timeout without an answer', async (t) => {
  let loseOnProclaim = true;
  const { client } = await setup(t, {
    campaign(stream, request, n) {
      if (n === 1) lead(stream, request, 2000);
      else if (request.value !== 'v' && loseOnProclaim) {
        setTimeout(() => stream.emit('error', failure(status.NOT_FOUND, 'taken over')), 30);
      }
    },
  }, { callTimeoutMs: 200 });
  const first = await client.campaign('p', 'v', { ttlMs: 2000 });
  await assert.rejects(first.proclaim('w'), (e) => e instanceof LeaseLostError && e.codeName === 'NOT_FOUND');
  assert.equal(first.isLeader, false);
  await assert.rejects(first.proclaim('x'), (e) => e === first.lostError, 'at once once lost');

  loseOnProclaim = false; // the value is never shown: the call timeout bounds the wait
  const second = await client.campaign('p', 'v', { ttlMs: 2000 });
  const started = performance.now();
  await assert.rejects(second.proclaim('w'), (e) => e instanceof LockServiceError && e.codeName === 'DEADLINE_EXCEEDED');
  assert.ok(performance.now() - started >= 195);
  assert.ok(second.isLeader, 'still leading: only the proclaim failed');
  await assert.rejects(second.proclaim('x'.repeat(257)), (e) => e.codeName === 'INVALID_ARGUMENT');
  await second.resign();
});

test('a wait that passes without leading half-closes the stream and rejects with LockNotAcquiredError (ABORTED)', async (t) => {
  const { fake, client } = await setup(t, {
    // Grants in the very instant of the half-close: the same half-close resigns it.
    onCampaignEnd(stream) {
      lead(stream, stream.requests.at(-1).request, 1000);
      stream.end();
    },
  });
  const started = performance.now();
  await assert.rejects(client.campaign('busy', 'v', { ttlMs: 200, waitMs: 180 }), (e) => {
    assert.ok(e instanceof LockNotAcquiredError);
    assert.equal(e.codeName, 'ABORTED');
    assert.equal(e.resource, 'busy');
    return true;
  });
  const took = performance.now() - started;
  assert.ok(took >= 175 && took < 1000, `after the wait: ${took} ms`);
  assert.ok(await eventually(() => fake.seen.campaignStreams[0].ended === true), 'half-closed');
  assert.ok(fake.seen.campaign.length >= 3, `requests while waiting: ${fake.seen.campaign.length}`);
  assert.equal(fake.seen.campaignStreams.length, 1);
});

test('an aborted signal withdraws the candidacy too, rejecting with CANCELLED and the reason as cause', async (t) => {
  const { fake, client } = await setup(t);
  const controller = new AbortController();
  const campaign = client.campaign('abort', 'v', { ttlMs: 1000, signal: controller.signal });
  assert.ok(await eventually(() => fake.seen.campaign.length >= 1), 'campaigning');
  const reason = new Error('shutting down');
  controller.abort(reason);
  await assert.rejects(campaign, (e) => e instanceof LockServiceError && e.codeName === 'CANCELLED' && e.cause === reason);
  assert.ok(await eventually(() => fake.seen.campaignStreams[0].ended === true), 'half-closed');
  await assert.rejects(client.campaign('abort', 'v', { ttlMs: 1000, signal: AbortSignal.abort() }),
    (e) => e.codeName === 'CANCELLED');
});

test('a stream that ends before leading rejects with the service error of its status', async (t) => {
  const { client } = await setup(t, {
    campaign(stream, request) {
      const code = request.election === 'bad' ? status.INVALID_ARGUMENT : status.ABORTED;
      stream.emit('error', failure(code, `election '${request.election}': no`));
    },
  });
  await assert.rejects(client.campaign('bad', 'v', { ttlMs: 1000 }),
    (e) => e instanceof LockServiceError && !(e instanceof LockNotAcquiredError) && e.codeName === 'INVALID_ARGUMENT');
  await assert.rejects(client.campaign('full', 'v', { ttlMs: 1000 }),
    (e) => e instanceof LockNotAcquiredError && e.codeName === 'ABORTED');
  await assert.rejects(client.campaign('x', 'y'.repeat(257), { ttlMs: 1000 }), (e) => e.codeName === 'INVALID_ARGUMENT');
});

test('leader: the value and term, or null; UNAVAILABLE is retried', async (t) => {
  const { fake, client } = await setup(t, {
    leader(call, cb, n) {
      if (n === 1) cb(failure(status.UNAVAILABLE, 'only 1 of 3 nodes answered'));
      else if (call.request.election === 'led') cb(null, { leader: { value: 'host-1', term: '18446744073709551614' } });
      else cb(null, {});
    },
  });
  assert.deepEqual(await client.leader('led'), { value: 'host-1', term: 18446744073709551614n });
  assert.equal(fake.seen.leader.length, 2, 'retried once');
  assert.equal(await client.leader('empty'), null);
});

test('leader: errors other than UNAVAILABLE are not retried', async (t) => {
  const { fake, client } = await setup(t, {
    leader: (call, cb) => cb(failure(status.INVALID_ARGUMENT, "election '': empty")),
  });
  await assert.rejects(client.leader(''), (e) => e instanceof LockServiceError && e.codeName === 'INVALID_ARGUMENT');
  assert.equal(fake.seen.leader.length, 1);
});

const A = { leader: { value: 'a', term: '5' } };
const B = { leader: { value: 'b', term: '6' } };
const NONE = {};

test('observe: the current state, then every change; a reopened stream repeats nothing and goes back to no older term', async (t) => {
  const { fake, client } = await setup(t, {
    observe(call, n) {
      if (n === 1) {
        call.write(NONE);
        setTimeout(() => call.write(A), 20);
        setTimeout(() => call.emit('error', failure(status.UNAVAILABLE, 'server shutting down')), 40);
      } else if (n === 2) {
        call.write(A); // the state already delivered
        setTimeout(() => call.end(), 20); // ends OK: reopened all the same
      } else if (n === 3) {
        call.write({ leader: { value: 'old', term: '4' } }); // a lagging replica: an older term
        setTimeout(() => call.write(B), 20);
        setTimeout(() => call.write({ leader: { value: 'b2', term: '6' } }), 40); // same term, new value
        setTimeout(() => call.write(NONE), 60);
      }
    },
  });
  const answers = recordAnswers(t);
  const events = [];
  const observation = client.observe('watched', (leader) => events.push(leader));
  await answers.processed(7); // every state the fake sent, over three streams
  await settled();
  assert.deepEqual(events, [null, { value: 'a', term: 5n }, { value: 'b', term: 6n }, { value: 'b2', term: 6n }, null]);
  assert.equal(fake.seen.observe.length, 3, 'reopened after each end');
  assert.ok(fake.seen.observe.every((call) => call.request.election === 'watched'));
  observation.close();
  assert.ok(await eventually(() => fake.seen.observe[2].cancelled === true), 'close cancels the stream');
});

test('observe reopens with backoff and without a limit of attempts', async (t) => {
  const { fake, client } = await setup(t, {
    observe(call, n) {
      if (n <= 6) call.emit('error', failure(status.UNAVAILABLE, 'no quorum'));
      else call.write(A);
    },
  });
  const events = [];
  const started = performance.now();
  const observation = client.observe('flaky', (leader) => events.push(leader));
  t.after(() => observation.close());
  assert.ok(await eventually(() => events.length === 1, 3000));
  const took = performance.now() - started;
  // backoff 5, 10, 20, 20, 20, 20 ms (the test's policy, with 3 attempts for unary calls)
  assert.ok(took >= 90, `backed off between attempts: ${took} ms`);
  assert.equal(fake.seen.observe.length, 7, 'more attempts than the retry policy gives a unary call');
  assert.deepEqual(events, [{ value: 'a', term: 5n }]);
});

test('observe: no callback after close returns, also when closed from a callback', async (t) => {
  const { client } = await setup(t, {
    observe(c) {
      c.write(A);
      c.write(B);
      c.write(NONE);
    },
  });
  // Closed the moment the client has processed the first state (the hook runs synchronously
  // after it), before the callback could run for it.
  const events = [];
  let observation;
  let processed = 0;
  t.after(onAnswerProcessed(() => {
    processed += 1;
    observation?.close();
  }));
  observation = client.observe('closing', (leader) => events.push(leader));
  assert.ok(await eventually(() => processed >= 1));
  await settled();
  assert.deepEqual(events, [], 'a state passed on before close() returned is not called back after');
  assert.equal(observation.closed, true);
  assert.equal(await observation.next().then((r) => r.done), true, 'its iteration is over');

  const seen = [];
  const second = client.observe('closing', (leader) => {
    seen.push(leader);
    second.close();
  });
  assert.ok(await eventually(() => seen.length === 1));
  await settled();
  assert.deepEqual(seen, [{ value: 'a', term: 5n }], 'closed from the first callback: B and NONE never come');
});

test('string, inspect and JSON forms of a leadership show the election, term, value and whether it leads', async (t) => {
  const { client } = await setup(t, { campaign: (stream, request) => lead(stream, request, 1000, { term: '12' }) });
  const leadership = await client.campaign('forms', 'host-1', { ttlMs: 1000 });
  assert.equal(String(leadership), 'Leadership[election=forms, term=12, value=host-1, leader=true]');
  assert.deepEqual(JSON.parse(JSON.stringify(leadership)), { election: 'forms', term: '12', value: 'host-1', isLeader: true });
  assert.match(inspect(leadership), /^Leadership \{/);
  await leadership.resign();
  assert.equal(String(leadership), 'Leadership[election=forms, term=12, value=host-1, leader=false]');
});

test('closing the client: streams under way go on; an observation whose stream ends then stops instead of retrying', async (t) => {
  let observed;
  const fake = await startFake({
    observe(call) {
      observed = call;
      call.write(A);
    },
    campaign: (stream, request) => lead(stream, request, 5000),
  });
  t.after(() => fake.close());
  const client = new LockClient(fake.address, { retry: { initialBackoffMs: 5, maxBackoffMs: 5 } });
  const events = [];
  const observation = client.observe('closed', (leader) => events.push(leader));
  const leadership = await client.campaign('closed', 'v', { ttlMs: 5000 });
  assert.ok(await eventually(() => events.length === 1));
  client.close();
  assert.throws(() => client.observe('closed', () => {}), 'no new calls');
  await assert.rejects(client.campaign('closed', 'v', { ttlMs: 1000 }));
  await sleep(50);
  assert.ok(leadership.isLeader, 'grpc-js lets calls under way finish');
  assert.equal(await leadership.resign(), true);
  observed.emit('error', failure(status.UNAVAILABLE, 'server shutting down'));
  assert.ok(await eventually(() => observation.closed), 'stops: the channel is shut down');
  await sleep(50);
  assert.equal(fake.seen.observe.length, 1);
  assert.equal(events.length, 1);
});
