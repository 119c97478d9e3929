// An AbortSignal on every async call: aborting rejects with a CANCELLED LockServiceError whose
// cause is the signal's reason, and stops the wait (cancelling a unary call under way).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LockClient, LockServiceError } from '../dist/index.js';
import { duration, eventually, lease, startFake } from './fake-server.mjs';

async function setup(t, handlers) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry: { maxAttempts: 2, initialBackoffMs: 5, maxBackoffMs: 5 } });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

const reason = new Error('the caller gave up');

/** Aborts with `reason` once `started()` holds, and checks the rejection. */
async function abortedWhile(promise, started, controller, what) {
  assert.ok(await eventually(started), `${what} started`);
  controller.abort(reason);
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof LockServiceError, `${what}: ${e}`);
    assert.equal(e.codeName, 'CANCELLED');
    assert.equal(e.cause, reason);
    assert.match(e.message, /was aborted/);
    return true;
  });
}

function keptAnswer(stream, request) {
  stream.write({ lease: lease(request.resource, request.token, 2000), state: 'LEASE_STATE_HELD', sequence: request.sequence });
}

test('extend: a unary Extend is cancelled; on a kept lease the wait for its answer is given up', async (t) => {
  let quiet = false;
  const { fake, client } = await setup(t, {
    extend: () => {}, // never answers
    keepAlive: (stream, request) => quiet || keptAnswer(stream, request),
  });
  const held = await client.acquire('ext', { ttlMs: 2000 });
  let controller = new AbortController();
  await abortedWhile(held.extend(3000, { signal: controller.signal }), () => fake.seen.extend.length === 1,
    controller, 'a unary extend');
  assert.ok(held.valid, 'still held');
  await assert.rejects(held.extend(3000, { signal: AbortSignal.abort() }), (e) => e.codeName === 'CANCELLED');
  assert.equal(fake.seen.extend.length, 1, 'an aborted signal sends nothing');

  held.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 1));
  quiet = true;
  controller = new AbortController();
  const sent = fake.seen.keepAlive.length;
  await abortedWhile(held.extend(4000, { signal: controller.signal }), () => fake.seen.keepAlive.length > sent,
    controller, 'a kept extend');
  assert.equal(held.ttlMs, 4000, 'the new ttl was sent and stays in force');
  quiet = false;
  assert.equal(await held.release(), true);
});

test('release: the wait for the end of a kept stream is given up; the lease counts as released', async (t) => {
  const { fake, client } = await setup(t, { keepAlive: keptAnswer, onEnd: () => {} }); // never ends the stream
  const held = await client.acquire('rel', { ttlMs: 2000 });
  held.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 1));
  const controller = new AbortController();
  await abortedWhile(held.release({ signal: controller.signal }), () => fake.seen.streams[0].ended === true,
    controller, 'release');
  assert.equal(held.valid, false);
  assert.equal(await held.release(), false, 'released already');

  const unary = await client.acquire('rel2', { ttlMs: 2000 });
  await assert.rejects(unary.release({ signal: AbortSignal.abort() }), (e) => e.codeName === 'CANCELLED');
  assert.equal(unary.valid, false);
});

test('resign and proclaim: the waits are given up', async (t) => {
  let answer = true;
  const { fake, client } = await setup(t, {
    campaign(stream, request) {
      if (answer) stream.write({ term: '3', value: request.value, validity: duration(2000), state: 'LEASE_STATE_HELD', sequence: request.sequence });
    },
    onCampaignEnd: () => {}, // never ends the stream
  });
  const leadership = await client.campaign('el', 'v', { ttlMs: 2000 });
  answer = false;
  let controller = new AbortController();
  const sent = fake.seen.campaign.length;
  await abortedWhile(leadership.proclaim('w', { signal: controller.signal }), () => fake.seen.campaign.length > sent,
    controller, 'proclaim');
  assert.ok(leadership.isLeader, 'still leading');
  controller = new AbortController();
  await abortedWhile(leadership.resign({ signal: controller.signal }), () => fake.seen.campaignStreams[0].ended === true,
    controller, 'resign');
  assert.equal(leadership.isLeader, false);
  assert.equal(await leadership.resign(), false);
});

test('leader: the call is cancelled', async (t) => {
  const { fake, client } = await setup(t, { leader: () => {} }); // never answers
  const controller = new AbortController();
  await abortedWhile(client.leader('el', { signal: controller.signal }), () => fake.seen.leader.length === 1,
    controller, 'leader');
  await assert.rejects(client.leader('el', { signal: AbortSignal.abort() }), (e) => e.codeName === 'CANCELLED');
  assert.equal(fake.seen.leader.length, 1);
});
