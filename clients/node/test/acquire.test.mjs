import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { LockClient, LockNotAcquiredError, LockServiceError } from '../dist/index.js';
import { eventually, failure, lease, millis, sleep, startFake, status } from './fake-server.mjs';

const TOKEN = /^[A-Za-z0-9_-]{32}$/;
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

test('tokens are 32 base64url characters, fresh per acquire, reused across an UNAVAILABLE retry', async (t) => {
  const { fake, client } = await setup(t, {
    acquire(call, cb, n) {
      if (n === 1) cb(failure(status.UNAVAILABLE, 'only 2 of 5 nodes answered'));
      else cb(null, { lease: lease(call.request.resource, call.request.token, 1000, '42') });
    },
  });
  const held = await client.acquire('orders/1', { ttlMs: 1000 });
  assert.equal(held.fencingToken, 42n);
  assert.equal(fake.seen.acquire.length, 2);
  const [first, second] = fake.seen.acquire.map((a) => a.request);
  assert.match(first.token, TOKEN);
  assert.equal(second.token, first.token);
  assert.equal(millis(first.ttl), 1000);
  assert.equal(first.owner, client.owner);
  assert.equal(fake.seen.release.length, 0, 'a granted lease is not given back');

  await client.acquire('orders/2', { ttlMs: 1000 });
  const third = fake.seen.acquire[2].request;
  assert.match(third.token, TOKEN);
  assert.notEqual(third.token, first.token);
});

test('DEADLINE_EXCEEDED is retried with the same token and the wait that is left', async (t) => {
  const { fake, client } = await setup(t, {
    acquire(call, cb, n) {
      if (n === 1) setTimeout(() => cb(null, { lease: lease(call.request.resource, call.request.token, 1000) }), 800);
      else cb(null, { lease: lease(call.request.resource, call.request.token, 1000) });
    },
  }, { callTimeoutMs: 150 });
  const held = await client.acquire('slow', { ttlMs: 1000, waitMs: 200 });
  assert.ok(held.valid);
  assert.equal(fake.seen.acquire.length, 2);
  const [first, second] = fake.seen.acquire.map((a) => a.request);
  assert.equal(second.token, first.token);
  assert.ok(millis(first.wait) >= 199, `first wait ${millis(first.wait)}`);
  assert.ok(millis(second.wait) < 100, `the retry sends the wait that is left, not ${millis(second.wait)}`);
});

test('UNAVAILABLE is retried until the Acquire\'s own deadline (wait + call timeout), then its token is released', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(failure(status.UNAVAILABLE, 'only 2 of 5 nodes answered')),
  }, { callTimeoutMs: 300, retry: { maxAttempts: 3, initialBackoffMs: 5, maxBackoffMs: 5 } });
  const started = performance.now();
  await assert.rejects(client.acquire('gone', { ttlMs: 1000, waitMs: 200 }), (e) => {
    assert.ok(e instanceof LockServiceError);
    assert.ok(!(e instanceof LockNotAcquiredError));
    assert.equal(e.codeName, 'UNAVAILABLE');
    assert.equal(e.code, status.UNAVAILABLE);
    return true;
  });
  const elapsed = performance.now() - started;
  assert.ok(fake.seen.acquire.length > 3, `${fake.seen.acquire.length} attempts: more than the policy's 3`);
  assert.ok(elapsed > 500 - 5 - 50, `given up after ${elapsed} ms, before its deadline`);
  assert.ok(elapsed < 500 + 1000, `given up ${elapsed} ms after it started`);
  assert.equal(new Set(fake.seen.acquire.map((a) => a.request.token)).size, 1);
  assert.ok(await eventually(() => fake.seen.release.length === 1), 'a Release is sent');
  assert.equal(fake.seen.release[0].request.token, fake.seen.acquire[0].request.token);
  assert.equal(fake.seen.release[0].request.resource, 'gone');
});

test('a policy of one attempt retries nothing', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(failure(status.UNAVAILABLE, 'only 2 of 5 nodes answered')),
  }, { retry: { maxAttempts: 1 } });
  await assert.rejects(client.acquire('gone', { ttlMs: 1000 }), (e) => e.codeName === 'UNAVAILABLE');
  assert.equal(fake.seen.acquire.length, 1);
});

test('an Acquire aborted through its signal is cancelled and releases its token', async (t) => {
  const { fake, client } = await setup(t, { acquire: () => {} }); // never answers
  const controller = new AbortController();
  const started = performance.now();
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(client.acquire('aborted', { ttlMs: 1000, waitMs: 10_000, signal: controller.signal }),
    (e) => e instanceof LockServiceError && e.codeName === 'CANCELLED');
  assert.ok(performance.now() - started < 1000, 'the abort ends the call at once');
  assert.ok(await eventually(() => fake.seen.release.length === 1), 'a Release is sent');
  assert.equal(fake.seen.release[0].request.token, fake.seen.acquire[0].request.token);

  await assert.rejects(client.acquire('aborted', { ttlMs: 1000, signal: AbortSignal.abort() }),
    (e) => e.codeName === 'CANCELLED');
  assert.equal(fake.seen.acquire.length, 1, 'an already aborted signal sends nothing');
});

test('ABORTED is LockNotAcquiredError, never retried; tryAcquire gives null', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(failure(status.ABORTED, `resource '${call.request.resource}' is held by another owner`)),
  });
  await assert.rejects(client.acquire('busy', { ttlMs: 1000, waitMs: 50 }), (e) => {
    assert.ok(e instanceof LockNotAcquiredError);
    assert.ok(e instanceof LockServiceError);
    assert.equal(e.codeName, 'ABORTED');
    assert.equal(e.code, status.ABORTED);
    assert.match(e.message, /^ABORTED: resource 'busy' is held/);
    return true;
  });
  assert.equal(fake.seen.acquire.length, 1);
  assert.equal(await client.tryAcquire('busy', { ttlMs: 1000 }), null);
  assert.equal(fake.seen.acquire.length, 2);
  assert.equal(millis(fake.seen.acquire[1].request.wait), 0);
  await sleep(50);
  assert.equal(fake.seen.release.length, 0, 'nothing was granted, nothing to give back');
});

test('INVALID_ARGUMENT is a LockServiceError, not retried, naming the resource', async (t) => {
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(failure(status.INVALID_ARGUMENT, 'ttl 0ms is outside [10ms, 3600000ms]')),
  });
  await assert.rejects(client.acquire('bad', { ttlMs: 0 }), (e) => {
    assert.ok(e instanceof LockServiceError);
    assert.ok(!(e instanceof LockNotAcquiredError));
    assert.equal(e.codeName, 'INVALID_ARGUMENT');
    assert.match(e.message, /resource 'bad'/);
    return true;
  });
  assert.equal(fake.seen.acquire.length, 1);
});

test('the deadline counts from the send time; a grant with under half its validity left is asked again', async (t) => {
  const { fake, client } = await setup(t, {
    acquire(call, cb, n) {
      const grant = () => cb(null, { lease: lease(call.request.resource, call.request.token, 2000) });
      if (n === 1) setTimeout(grant, 300); // answer late, with most of the validity left
      else if (n === 2) setTimeout(grant, 1200); // answer with less than half left
      else grant();
    },
  });
  const before = performance.now();
  const held = await client.acquire('timed', { ttlMs: 2000 });
  const after = performance.now();
  assert.equal(fake.seen.acquire.length, 1);
  assert.ok(held.deadline >= before + 2000, 'not before the send time');
  assert.ok(held.deadline <= before + 2000 + 50, `from the send time, not ${held.deadline - before}`);
  assert.ok(held.deadline <= after + 2000 - 250, 'not from the time the answer arrived');
  assert.ok(held.remainingMs <= 2000 - 300 - 100 + 1, `remaining ${held.remainingMs}`);
  assert.ok(held.valid);

  const again = await client.acquire('late', { ttlMs: 2000 });
  assert.equal(fake.seen.acquire.length, 3, 'the late grant was asked for again');
  assert.equal(fake.seen.acquire[2].request.token, fake.seen.acquire[1].request.token);
  assert.ok(again.deadline >= fake.seen.acquire[2].at - 50 + 2000 - 50);
  assert.ok(again.remainingMs > 1500, `remaining ${again.remainingMs}`);
});
