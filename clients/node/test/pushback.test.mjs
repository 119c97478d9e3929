// Rule 17 of clients/conformance/README.md: the server's early refusal (UNAVAILABLE with
// `grpc-retry-pushback-ms`) is waited out, at least the pushback and with jitter, by unary
// retries and by stream reopens; "do not retry" stops at once; a kept lease is still lost at
// its guarded deadline while it waits.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { LockClient } from '../dist/index.js';
import { DO_NOT_RETRY, jittered, parsePushback } from '../dist/pushback.js';
import { duration, eventually, lease, millis, sleep, startFake, status } from './fake-server.mjs';

// The client's own backoff (10 ms doubling to 40 ms) is far below the pushbacks used here.
const retry = { maxAttempts: 5, initialBackoffMs: 10, maxBackoffMs: 40 };

async function setup(t, handlers, opts = {}) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry, ...opts });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

/** How a swamped server refuses: UNAVAILABLE, with the pushback trailer. */
function refusal(pushback) {
  const metadata = new grpc.Metadata();
  metadata.set('grpc-retry-pushback-ms', pushback);
  return Object.assign(new Error('refused early'), { code: status.UNAVAILABLE, details: 'refused early: too many at once', metadata });
}

function assertWaitedWithJitter(times, count, pushbackMs) {
  const gaps = times.slice(1).map((at, i) => at - times[i]);
  assert.equal(gaps.length, count, `gaps ${gaps}`);
  // Each gap is the client's wait plus a little transport time; timers may fire up to 1 ms early.
  for (const gap of gaps) assert.ok(gap >= pushbackMs - 1, `waited ${gap} ms, pushback ${pushbackMs} ms`);
  assert.ok(new Set(gaps.map((g) => g.toFixed(3))).size > 1, `jittered waits, not all equal: ${gaps}`);
}

function keepAnswering(stream, request) {
  stream.write({ lease: lease(request.resource, request.token, millis(request.ttl) * 0.99), state: 'LEASE_STATE_HELD', sequence: request.sequence });
}

test('parsePushback and jittered', () => {
  assert.equal(parsePushback('150'), 150);
  assert.equal(parsePushback(' 0 '), 0);
  for (const bad of ['-1', '', '1.5', 'soon', '1e3', '-0', '9'.repeat(30)]) assert.equal(parsePushback(bad), DO_NOT_RETRY, bad);
  const waits = Array.from({ length: 200 }, () => jittered(200));
  assert.ok(waits.every((w) => w >= 200 && w <= 300));
  assert.ok(new Set(waits).size > 100);
});

test('an Acquire refused with a pushback waits at least it, with jitter, and keeps its token', async (t) => {
  const { fake, client } = await setup(t, {
    acquire(call, callback, n) {
      if (n <= 3) callback(refusal('150'));
      else callback(null, { lease: lease(call.request.resource, call.request.token, 10000) });
    },
  });
  const held = await client.acquire('orders/1', { ttlMs: 10000, waitMs: 5000 });
  assertWaitedWithJitter(fake.seen.acquire.map((a) => a.at), 3, 150);
  assert.equal(new Set(fake.seen.acquire.map((a) => a.request.token)).size, 1);
  // The waits came out of the Acquire's wait: the last try sent what was left of it.
  assert.ok(millis(fake.seen.acquire[3].request.wait) < 5000 - 450);
  assert.ok(held.valid);
});

test('"do not retry" ends an Acquire at once with UNAVAILABLE and gives the token back', async (t) => {
  const { fake, client } = await setup(t, { acquire: (call, callback) => callback(refusal('-1')) });
  await assert.rejects(client.acquire('orders/1', { ttlMs: 10000, waitMs: 5000 }), (e) => e.code === status.UNAVAILABLE);
  assert.equal(fake.seen.acquire.length, 1);
  assert.ok(await eventually(() => fake.seen.release.length === 1));
  assert.equal(fake.seen.release[0].request.token, fake.seen.acquire[0].request.token);
});

test('a unary call refused with a pushback waits at least it; an unparsable one is "do not retry"', async (t) => {
  let extends_ = 0;
  const { fake, client } = await setup(t, {
    extend(call, callback) {
      extends_++;
      if (extends_ <= 2) callback(refusal('120'));
      else callback(null, { lease: lease(call.request.resource, call.request.token, millis(call.request.ttl)) });
    },
    release: (call, callback) => callback(refusal('soon')),
  });
  const held = await client.acquire('orders/1', { ttlMs: 10000 });
  await held.extend(20000);
  assertWaitedWithJitter(fake.seen.extend.map((e) => e.at), 2, 120);
  await assert.rejects(held.release(), (e) => e.code === status.UNAVAILABLE);
  assert.equal(fake.seen.release.length, 1);
});

test('a kept stream refused with a pushback reopens after it, with the same token and no loss', async (t) => {
  const opened = [];
  const { fake, client } = await setup(t, {
    acquire: (call, callback) => callback(null, { lease: lease(call.request.resource, call.request.token, 2970) }),
    keepAlive(stream, request, n) {
      if (n === 1) opened.push(performance.now());
      if (n === 1 && opened.length <= 3) stream.emit('error', refusal('150'));
      else keepAnswering(stream, request);
    },
  });
  const held = await client.acquire('orders/1', { ttlMs: 3000 });
  const token = fake.seen.acquire[0].request.token;
  const lost = [];
  held.keepAlive().onLost((e) => lost.push(e));
  assert.ok(await eventually(() => opened.length >= 4, 5000));
  assert.equal(opened.length, 4);
  assertWaitedWithJitter(opened, 3, 150);
  assert.ok(fake.seen.keepAlive.every((k) => k.request.token === token));
  assert.ok(await eventually(() => held.deadline > fake.seen.keepAlive[3].at + 2000, 3000), 'renewed');
  assert.ok(held.valid);
  assert.deepEqual(lost, []);
});

test('a kept lease whose guarded deadline passes during a pushback is lost', async (t) => {
  const opened = [];
  const { fake, client } = await setup(t, {
    keepAlive(stream, request, n) {
      if (n === 1) opened.push(performance.now());
      stream.emit('error', refusal('5000'));
    },
  });
  const held = await client.acquire('orders/1', { ttlMs: 800 });
  const lost = [];
  held.keepAlive().onLost((e) => lost.push({ e, at: performance.now() }));
  assert.ok(await eventually(() => lost.length === 1, 5000));
  assert.equal(lost[0].e.code, status.DEADLINE_EXCEEDED);
  assert.ok(!held.valid);
  await sleep(300);
  assert.equal(opened.length, 1, 'waiting the pushback, not reopening');
  assert.equal(lost.length, 1);
  assert.ok(await eventually(() => fake.seen.release.length === 1), 'given back');
});

test('"do not retry" on a kept stream is a loss with UNAVAILABLE, and the lease is given back', async (t) => {
  const { fake, client } = await setup(t, { keepAlive: (stream) => stream.emit('error', refusal('-1')) });
  const held = await client.acquire('orders/1', { ttlMs: 10000 });
  const lost = [];
  held.keepAlive().onLost((e) => lost.push(e));
  assert.ok(await eventually(() => lost.length === 1, 5000));
  assert.equal(lost[0].code, status.UNAVAILABLE);
  assert.ok(!held.valid);
  assert.equal(fake.seen.streams.length, 1);
  assert.ok(await eventually(() => fake.seen.release.length === 1), 'given back');
});

test('a Campaign refused with a pushback campaigns again after it, with the same token', async (t) => {
  const opened = [];
  const { fake, client } = await setup(t, {
    campaign(stream, request, n) {
      if (n === 1) opened.push(performance.now());
      if (n === 1 && opened.length <= 2) stream.emit('error', refusal('150'));
      else stream.write({ term: '7', value: request.value, validity: duration(2970), state: 'LEASE_STATE_HELD', sequence: request.sequence });
    },
  });
  const leadership = await client.campaign('jobs', 'a', { ttlMs: 3000 });
  assert.equal(leadership.term, 7n);
  assertWaitedWithJitter(opened, 2, 150);
  assert.equal(new Set(fake.seen.campaign.map((c) => c.request.token)).size, 1);
  assert.equal(await leadership.resign(), true);
});

test('an Observe reopen waits at least the pushback', async (t) => {
  const opened = [];
  const { client } = await setup(t, {
    observe(call, n) {
      opened.push(performance.now());
      if (n <= 2) call.emit('error', refusal('150'));
      else call.write({});
    },
  });
  const events = [];
  const observation = client.observe('watched', (leader) => events.push(leader));
  t.after(() => observation.close());
  assert.ok(await eventually(() => events.length === 1, 5000));
  assertWaitedWithJitter(opened, 2, 150);
});
