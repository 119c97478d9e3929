// lead(): campaign, run the work with a signal aborted the moment the leadership is lost,
// resign when it returns; on a loss fail or (requeue) campaign again; the caller's signal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LeaseLostError, Leadership, LockClient, LockServiceError } from '../dist/index.js';
import { duration, eventually, failure, manualClock, startFake, status } from './fake-server.mjs';

async function setup(t, handlers, opts = {}) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry: { maxAttempts: 3, initialBackoffMs: 5, maxBackoffMs: 20 }, ...opts });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

function lead(stream, request, validityMs, { term = '9', sequence = request.sequence, value = request.value } = {}) {
  stream.write({ term, value, validity: duration(validityMs), state: 'LEASE_STATE_HELD', sequence });
}

/** Resolves when `signal` aborts (at once if it has). */
const aborted = (signal) => new Promise((resolve) => {
  if (signal.aborted) resolve();
  else signal.addEventListener('abort', resolve, { once: true });
});

test('lead: campaigns, runs the work with the leadership, resigns when it returns and resolves with its result', async (t) => {
  const { fake, client } = await setup(t, { campaign: (stream, request) => lead(stream, request, 2000, { term: '17' }) });
  let seen;
  const result = await client.lead('jobs', 'host-1', { ttlMs: 2000 }, async (leadership, signal) => {
    seen = { leadership, signal, leading: leadership.isLeader, term: leadership.term, value: leadership.value };
    return 'done';
  });
  assert.equal(result, 'done');
  assert.ok(seen.leadership instanceof Leadership);
  assert.equal(seen.leading, true);
  assert.equal(seen.term, 17n);
  assert.equal(seen.value, 'host-1');
  assert.equal(seen.signal.aborted, false, 'a resign is not a loss');
  assert.equal(seen.leadership.isLeader, false, 'resigned');
  assert.equal(fake.seen.campaignStreams.length, 1);
  assert.equal(fake.seen.campaignStreams[0].ended, true, 'resigned by half-closing its stream');
});

test('lead: the loss aborts the work\'s signal at once with the LeaseLostError; lead rejects with it once the work returned', async (t) => {
  const { client } = await setup(t, {
    campaign(stream, request, n) {
      lead(stream, request, 2000);
      if (n === 2) stream.emit('error', failure(status.NOT_FOUND, "election 'lost': the leadership was taken over"));
    },
  });
  let reason;
  let returned = false;
  await assert.rejects(client.lead('lost', 'v', { ttlMs: 200 }, async (leadership, signal) => {
    await aborted(signal);
    reason = signal.reason;
    assert.equal(leadership.isLeader, false, 'not leading once told');
    returned = true;
  }), (e) => {
    assert.ok(returned, 'the work returned first');
    assert.ok(e instanceof LeaseLostError);
    assert.equal(e.codeName, 'NOT_FOUND');
    assert.equal(e, reason, 'the same error the work was told with');
    return true;
  });
});

test('lead on a manual clock: without renewals the work is told exactly a guard before the deadline', async (t) => {
  const clock = manualClock(t);
  const { client } = await setup(t, { campaign: (stream, request, n) => n === 1 && lead(stream, request, 600) });
  let toldAt;
  let deadline;
  let started;
  const outcome = client.lead('guarded', 'v', { ttlMs: 4000 }, async (leadership, signal) => { // guard 100 ms
    started = leadership;
    await aborted(signal);
    toldAt = clock.now();
    deadline = leadership.deadline;
  }).catch((e) => e);
  assert.ok(await eventually(() => started !== undefined));
  clock.advanceTo(started.deadline - 100 - 1);
  await new Promise(setImmediate);
  assert.equal(toldAt, undefined, 'not before the guard');
  clock.advance(1);
  const error = await outcome;
  assert.equal(toldAt, deadline - 100, 'at the guard: before the deadline, when another may be elected');
  assert.ok(error instanceof LeaseLostError);
  assert.equal(error.codeName, 'DEADLINE_EXCEEDED');
});

test('lead with requeue: after a loss it campaigns again with a new candidacy and runs the work again', async (t) => {
  const { fake, client } = await setup(t, {
    campaign(stream, request, n) {
      lead(stream, request, 2000, { term: String(20 + stream.index) });
      if (stream.index === 0 && n === 2) stream.emit('error', failure(status.NOT_FOUND, 'taken over'));
    },
  });
  const terms = [];
  const result = await client.lead('again', 'v', { ttlMs: 200, requeue: true }, async (leadership, signal) => {
    terms.push(leadership.term);
    if (terms.length === 1) {
      await aborted(signal);
      return 'first';
    }
    return 'second';
  });
  assert.equal(result, 'second');
  assert.deepEqual(terms, [20n, 21n]);
  const [first, second] = fake.seen.campaignStreams;
  assert.notEqual(second.requests[0].request.token, first.requests[0].request.token, 'a new candidacy');
  assert.equal(second.requests[0].request.resume, false);
  assert.equal(second.ended, true, 'the second term resigned');
});

test('lead: the caller\'s signal aborts the work\'s, lead waits for the work, resigns and rejects CANCELLED', async (t) => {
  const { fake, client } = await setup(t, { campaign: (stream, request) => lead(stream, request, 2000) });
  const controller = new AbortController();
  const reason = new Error('shutting down');
  let told;
  let returned = false;
  const outcome = client.lead('stop', 'v', { ttlMs: 2000, signal: controller.signal, requeue: true },
    async (leadership, signal) => {
      controller.abort(reason);
      await aborted(signal);
      told = signal.reason;
      assert.ok(leadership.isLeader, 'still leading while the work winds down');
      returned = true;
      return 'ignored';
    });
  await assert.rejects(outcome, (e) => {
    assert.ok(returned);
    assert.ok(e instanceof LockServiceError);
    assert.equal(e.codeName, 'CANCELLED');
    assert.equal(e.cause, reason);
    return true;
  });
  assert.equal(told.codeName, 'CANCELLED');
  assert.equal(told.cause, reason);
  assert.equal(fake.seen.campaignStreams.length, 1, 'not requeued');
  assert.equal(fake.seen.campaignStreams[0].ended, true, 'resigned');
});

test('lead: the caller\'s signal while waiting to lead withdraws the candidacy; the work never runs', async (t) => {
  const { fake, client } = await setup(t); // never leads
  const controller = new AbortController();
  let ran = false;
  const outcome = client.lead('waiting', 'v', { ttlMs: 1000, signal: controller.signal }, () => { ran = true; });
  assert.ok(await eventually(() => fake.seen.campaign.length >= 1));
  controller.abort();
  await assert.rejects(outcome, (e) => e instanceof LockServiceError && e.codeName === 'CANCELLED');
  assert.equal(ran, false);
  assert.ok(await eventually(() => fake.seen.campaignStreams[0].ended === true), 'withdrawn by half-closing');
  await assert.rejects(client.lead('waiting', 'v', { ttlMs: 1000, signal: AbortSignal.abort() }, () => {}),
    (e) => e.codeName === 'CANCELLED');
});

test('lead: a work that throws is resigned and its error re-raised, never requeued', async (t) => {
  const { fake, client } = await setup(t, { campaign: (stream, request) => lead(stream, request, 2000) });
  const error = new Error('work failed');
  await assert.rejects(client.lead('fails', 'v', { ttlMs: 2000, requeue: true }, async () => {
    throw error;
  }), (e) => e === error);
  assert.equal(fake.seen.campaignStreams.length, 1, 'not requeued');
  assert.equal(fake.seen.campaignStreams[0].ended, true, 'resigned');
});

test('lead: a work that throws its own error after a loss rejects with the LeaseLostError, the work\'s error its cause', async (t) => {
  const { fake, client } = await setup(t, {
    campaign(stream, request, n) {
      lead(stream, request, 2000);
      if (n === 2) stream.emit('error', failure(status.NOT_FOUND, 'taken over'));
    },
  });
  const error = new Error('the write was refused');
  await assert.rejects(client.lead('both', 'v', { ttlMs: 200, requeue: true }, async (leadership, signal) => {
    await aborted(signal);
    throw error;
  }), (e) => e instanceof LeaseLostError && e.codeName === 'NOT_FOUND' && e.cause === error);
  assert.equal(fake.seen.campaignStreams.length, 1, 'not requeued');

  // Throwing what the signal said (signal.throwIfAborted()) is a loss like any other: requeued.
  let runs = 0;
  const { client: again } = await setup(t, {
    campaign(stream, request, n) {
      lead(stream, request, 2000);
      if (stream.index === 0 && n === 2) stream.emit('error', failure(status.NOT_FOUND, 'taken over'));
    },
  });
  assert.equal(await again.lead('both', 'v', { ttlMs: 200, requeue: true }, async (leadership, signal) => {
    runs += 1;
    if (runs === 1) {
      await aborted(signal);
      signal.throwIfAborted();
    }
    return runs;
  }), 2);
});

test('lead: bad arguments are refused before any call', async (t) => {
  const { fake, client } = await setup(t);
  await assert.rejects(client.lead('x', 'v', { ttlMs: 1000 }), TypeError);
  await assert.rejects(client.lead('x', 'v'.repeat(257), { ttlMs: 1000 }, () => {}), (e) => e.codeName === 'INVALID_ARGUMENT');
  assert.equal(fake.seen.campaign.length, 0);
});
