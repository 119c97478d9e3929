// Permits of a semaphore (acquirePermit, withPermit): the permit travels in every request of its
// lease, a retry keeps the token, a given-up acquire gives back what it may hold, and no string
// form shows the token.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { test } from 'node:test';
import { LeaseLostError, LockClient, LockServiceError } from '../dist/index.js';
import { eventually, failure, lease, millis, sleep, startFake, status } from './fake-server.mjs';

const fastRetry = { maxAttempts: 4, initialBackoffMs: 10, maxBackoffMs: 40 };

async function setup(t, handlers, opts = {}) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry: fastRetry, ...opts });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

/** A grant of permit `permit` (default: N, the request's permits). */
function grant(call, cb, permit = call.request.permits, validityMs = 1000) {
  cb(null, { lease: { ...lease(call.request.resource, call.request.token, validityMs, '9'), permit } });
}

function answer(stream, request, validityMs = 1000) {
  stream.write({ lease: { ...lease(request.resource, request.token, validityMs), permit: request.permit },
    state: 'LEASE_STATE_HELD', sequence: request.sequence });
}

test('the permit travels in every request of the lease', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => grant(call, cb, 2),
    keepAlive: (stream, request) => answer(stream, request),
  });
  const held = await client.acquirePermit('jobs', 3, { ttlMs: 1000, waitMs: 100 });
  assert.equal(fake.seen.acquire[0].request.permits, 3);
  assert.equal(held.permit, 2);
  assert.equal(held.fencingToken, 9n);
  await held.extend(800); // not kept: a unary Extend
  held.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 1));
  await held.extend(900); // kept: through the stream
  assert.equal(await held.release(), true); // the half-close
  const other = await client.acquirePermit('jobs', 3, { ttlMs: 1000 });
  assert.equal(await other.release(), true); // not kept: a Release call
  assert.deepEqual(fake.seen.extend.map((e) => e.request.permit), [2]);
  assert.deepEqual([...new Set(fake.seen.keepAlive.map((k) => k.request.permit))], [2]);
  assert.ok(fake.seen.keepAlive.some((k) => millis(k.request.ttl) === 900));
  assert.deepEqual(fake.seen.release.map((r) => r.request.permit), [2]);
});

test('a lock sends no permits and has permit 0', async (t) => {
  const { fake, client } = await setup(t);
  const held = await client.acquire('jobs', { ttlMs: 1000 });
  assert.equal(fake.seen.acquire[0].request.permits, 0);
  assert.equal(held.permit, 0);
  await held.release();
  assert.equal(fake.seen.release[0].request.permit, 0);
});

test('a retry keeps the token and the permits', async (t) => {
  const { fake, client } = await setup(t, {
    acquire(call, cb, n) {
      if (n === 1) cb(failure(status.UNAVAILABLE, 'only 2 of 5 nodes answered'));
      else grant(call, cb, 1);
    },
  });
  const held = await client.acquirePermit('jobs', 4, { ttlMs: 1000, waitMs: 500 });
  const [first, second] = fake.seen.acquire.map((a) => a.request);
  assert.equal(second.token, first.token);
  assert.deepEqual([first.permits, second.permits], [4, 4]);
  assert.equal(held.permit, 1);
  assert.equal(fake.seen.release.length, 0, 'a granted permit is not given back');
});

test('given up before any answer, every permit is given back', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(failure(status.UNAVAILABLE, 'only 2 of 5 nodes answered')),
  }, { callTimeoutMs: 200, retry: { maxAttempts: 2, initialBackoffMs: 5, maxBackoffMs: 5 } });
  await assert.rejects(client.acquirePermit('jobs', 3, { ttlMs: 1000 }),
    (e) => e instanceof LockServiceError && e.codeName === 'UNAVAILABLE');
  const token = fake.seen.acquire[0].request.token;
  // A give-back is idempotent, so one whose answer came after the call timeout may be sent again.
  const givenBack = () => [...new Set(fake.seen.release.map((r) => r.request.permit))].sort();
  assert.ok(await eventually(() => givenBack().length >= 3));
  assert.deepEqual(givenBack(), [1, 2, 3]);
  assert.ok(fake.seen.release.every((r) => r.request.resource === 'jobs' && r.request.token === token));
});

test('given up after an answer named the permit, that permit is given back', async (t) => {
  const { fake, client } = await setup(t, {
    acquire(call, cb, n) {
      if (n === 1) setTimeout(() => grant(call, cb, 2, 500), 300); // 300 of 500 ms gone: asked again
      else cb(failure(status.UNAVAILABLE, 'only 2 of 5 nodes answered'));
    },
  }, { callTimeoutMs: 500 });
  await assert.rejects(client.acquirePermit('jobs', 3, { ttlMs: 500 }), LockServiceError);
  assert.ok(await eventually(() => fake.seen.release.length >= 1));
  await sleep(100); // no other Release follows
  assert.deepEqual(fake.seen.release.map((r) => r.request.permit), [2]);
});

test('tryAcquirePermit is null when every permit is held', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(failure(status.ABORTED, "semaphore 'jobs': no free permit of 3")),
  });
  assert.equal(await client.tryAcquirePermit('jobs', 3, { ttlMs: 1000 }), null);
  assert.equal(fake.seen.acquire[0].request.permits, 3);
  assert.equal(millis(fake.seen.acquire[0].request.wait), 0);
});

test('permits must be a positive integer', async (t) => {
  const { fake, client } = await setup(t);
  for (const bad of [0, -1, 1.5, NaN, '3', true]) {
    await assert.rejects(client.acquirePermit('jobs', bad, { ttlMs: 1000 }), RangeError);
  }
  assert.equal(fake.seen.acquire.length, 0);
});

test('the string, inspect and JSON forms name the permit, never the token', async (t) => {
  const { fake, client } = await setup(t, { acquire: (call, cb) => grant(call, cb, 2) });
  const held = await client.acquirePermit('jobs', 3, { ttlMs: 1000 });
  const token = fake.seen.acquire[0].request.token;
  assert.match(String(held), /^Lease\[resource=jobs, permit=2, fencingToken=9, remaining=\d+ms\]$/);
  assert.match(inspect(held), /permit: 2/);
  assert.equal(JSON.parse(JSON.stringify(held)).permit, 2);
  for (const form of [String(held), inspect(held, { showHidden: true, depth: 10 }), JSON.stringify(held)]) {
    assert.ok(!form.includes(token), form);
  }
  await held.release();
  await assert.rejects(held.extend(1000), (e) => e instanceof LeaseLostError
    && e.message.includes("lease on permit 2 of resource 'jobs' was released") && !e.message.includes(token));
});

test('withPermit keeps the permit alive, releases after, returns the result', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => grant(call, cb, 5, 300),
    keepAlive: (stream, request) => answer(stream, request, 300),
  });
  const result = await client.withPermit('jobs', 5, { ttlMs: 300 }, async (held) => {
    await sleep(400);
    assert.ok(held.valid, 'kept alive past its ttl');
    return held.permit * 10;
  });
  assert.equal(result, 50);
  assert.equal(fake.seen.acquire[0].request.permits, 5);
  assert.ok(fake.seen.keepAlive.every((k) => k.request.permit === 5));
  assert.equal(fake.seen.streams[0].ended, true, 'released by half-closing');
});

test('withPermit rejects with LeaseLostError after the work settles when the permit was lost', async (t) => {
  const { client } = await setup(t, {
    acquire: (call, cb) => grant(call, cb),
    keepAlive(stream, request) {
      answer(stream, request);
      setTimeout(() => stream.emit('error', failure(status.NOT_FOUND, 'taken over')), 50);
    },
  });
  await assert.rejects(client.withPermit('jobs', 2, { ttlMs: 1000 }, async (held) => {
    await new Promise((resolve) => held.signal.addEventListener('abort', resolve, { once: true }));
    return 'too late';
  }), (e) => e instanceof LeaseLostError && e.codeName === 'NOT_FOUND');
});
