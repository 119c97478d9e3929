// Idempotent unary calls retry UNAVAILABLE until their own deadline, not for a fixed number of
// attempts (issue 40): a replica that restarts, or a channel whose connections to the replicas
// still up are in their reconnect backoff, refuses for longer than a few quick attempts. The
// fire-and-forget give-back goes through the same retries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LockClient } from '../dist/index.js';
import { eventually, failure, lease, startFake, status } from './fake-server.mjs';

/** More refusals than the policy's 4 attempts, far fewer than its backoff fits in a call timeout. */
const REFUSALS = 8;
const retry = { maxAttempts: 4, initialBackoffMs: 10, maxBackoffMs: 50 };

async function setup(t, handlers) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

/** Refuses the first `refusals` calls as a channel with no replica reachable does, then answers. */
function refusedThen(answer, refusals = REFUSALS) {
  return (call, callback, n) => {
    if (n <= refusals) {
      callback(failure(status.UNAVAILABLE, 'failed to connect to all addresses; last error: ECONNREFUSED'));
    } else {
      answer(call, callback);
    }
  };
}

test('a release refused longer than the policy\'s attempts still releases, within its call timeout', async (t) => {
  const { fake, client } = await setup(t, { release: refusedThen((call, cb) => cb(null, { released: true })) });
  const held = await client.acquire('orders/1', { ttlMs: 10_000 });
  assert.equal(await held.release(), true);
  assert.equal(fake.seen.release.length, REFUSALS + 1);
  assert.equal(new Set(fake.seen.release.map((r) => r.request.token)).size, 1);
});

test('leader is retried the same way', async (t) => {
  const { fake, client } = await setup(t, {
    leader: refusedThen((call, cb) => cb(null, { leader: { value: 'a', term: '4' } })),
  });
  assert.deepEqual(await client.leader('scheduler'), { value: 'a', term: 4n });
  assert.equal(fake.seen.leader.length, REFUSALS + 1);
});

test('a lost lease is given back through the retries', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(null, { lease: lease(call.request.resource, call.request.token, 300) }),
    release: refusedThen((call, cb) => cb(null, { released: true }), 3),
  });
  const held = await client.acquire('orders/1', { ttlMs: 300 });
  const lost = [];
  held.onLost((e) => lost.push(e));
  assert.ok(await eventually(() => lost.length === 1), 'ran out: given back, fire and forget');
  assert.ok(await eventually(() => fake.seen.release.length === 4), `${fake.seen.release.length} Releases`);
});
