import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { LeaseLostError, LockClient, LockServiceError } from '../dist/index.js';
import {
  duration, eventually, failure, lease, manualClock, millis, recordAnswers, sleep, startFake, status,
} from './fake-server.mjs';

async function setup(t, handlers, opts = {}) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry: { maxAttempts: 2, initialBackoffMs: 5, maxBackoffMs: 5 }, ...opts });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

function answer(stream, request, validityMs, sequence = request.sequence) {
  stream.write({ lease: lease(request.resource, request.token, validityMs), state: 'LEASE_STATE_HELD', sequence });
}

test('release is idempotent: true once, then false without a call', async (t) => {
  const { fake, client } = await setup(t);
  const held = await client.acquire('twice', { ttlMs: 1000 });
  assert.equal(await held.release(), true);
  assert.equal(await held.release(), false);
  assert.equal(held.valid, false);
  assert.equal(held.remainingMs, 0);
  assert.equal(fake.seen.release.length, 1);
  assert.equal(fake.seen.release[0].request.token, fake.seen.acquire[0].request.token);
});

test('release reports released=false from the server', async (t) => {
  const { client } = await setup(t, { release: (c, cb) => cb(null, { released: false }) });
  const held = await client.acquire('expired', { ttlMs: 1000 });
  assert.equal(await held.release(), false);
});

test('a kept lease is released by half-closing its stream: OK is true, NOT_FOUND is false', async (t) => {
  let endWith = 'ok';
  const { fake, client } = await setup(t, {
    keepAlive: (stream, request) => answer(stream, request, 1000),
    onEnd: (stream) => (endWith === 'ok' ? stream.end() : stream.emit('error', failure(status.NOT_FOUND, 'not held'))),
  });
  const a = await client.acquire('kept', { ttlMs: 1000 }).then((l) => l.keepAlive());
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 1));
  assert.equal(await a.release(), true);
  assert.equal(fake.seen.streams[0].ended, true, 'the stream was half-closed');
  endWith = 'not-found';
  const b = await client.acquire('kept', { ttlMs: 1000 }).then((l) => l.keepAlive());
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 2));
  assert.equal(await b.release(), false);
  assert.equal(fake.seen.release.length, 0, 'no unary Release was needed');
});

test('the loss callbacks run once when the stream ends NOT_FOUND; later ones at once', async (t) => {
  const clock = manualClock(t);
  const { client } = await setup(t, {
    keepAlive(stream, request, n) {
      answer(stream, request, 1000);
      if (n === 1) setTimeout(() => stream.emit('error', failure(status.NOT_FOUND, "resource 'lost' is not held")), 100);
    },
  });
  const held = await client.acquire('lost', { ttlMs: 1000 });
  const calls = [];
  held.keepAlive().onLost((e) => calls.push(e));
  assert.ok(await eventually(() => calls.length > 0));
  assert.equal(held.valid, false);
  assert.equal(held.remainingMs, 0);
  assert.ok(calls[0] instanceof LeaseLostError);
  assert.ok(calls[0] instanceof LockServiceError);
  assert.equal(calls[0].codeName, 'NOT_FOUND');
  assert.equal(held.signal.aborted, true);
  assert.equal(held.signal.reason, calls[0]);
  clock.advance(60_000); // past the deadline: the expiry timer must not report it again
  assert.equal(calls.length, 1);
  assert.equal(clock.pending, 0, 'its expiry timer was cleared');
  let late;
  held.onLost((e) => { late = e; });
  assert.equal(late, calls[0], 'a callback registered after the loss runs at once');
});

test('a stream that ends OK without the holder asking is a loss', async (t) => {
  const { client } = await setup(t, {
    keepAlive(stream, request) {
      answer(stream, request, 1000);
      setTimeout(() => stream.end(), 50);
    },
  });
  const held = await client.acquire('ended', { ttlMs: 1000 });
  let lost;
  held.keepAlive().onLost((e) => { lost = e; });
  assert.ok(await eventually(() => lost !== undefined));
  assert.equal(lost.codeName, 'UNAVAILABLE');
  assert.equal(held.valid, false);
});

test('the guard: a lease without renewals is lost ttl/20 before its deadline, once', async (t) => {
  const { client } = await setup(t);
  const held = await client.acquire('guarded', { ttlMs: 400 }); // guard 20 ms
  const calls = [];
  held.onLost((e) => calls.push({ at: performance.now(), e }));
  assert.ok(await eventually(() => calls.length > 0, 1000));
  assert.equal(calls[0].e.codeName, 'DEADLINE_EXCEEDED');
  assert.ok(calls[0].at >= held.deadline - 20 - 1, 'not before the guard');
  assert.ok(calls[0].at < held.deadline, `reported before the deadline (${held.deadline - calls[0].at} ms margin)`);
});

test('on a manual clock: a lease is valid until exactly ttl/20 before its deadline and lost at that instant, once', async (t) => {
  const clock = manualClock(t);
  const { fake, client } = await setup(t);
  const sent = clock.now();
  const held = await client.acquire('manual', { ttlMs: 400 }); // guard 20 ms; the fake grants 1000 ms
  assert.equal(held.deadline, sent + 1000, 'the send time (the clock stood still) + validity');
  const calls = [];
  held.onLost((e) => calls.push({ at: clock.now(), e }));
  clock.advanceTo(held.deadline - 20 - 0.5);
  assert.equal(held.valid, true);
  assert.equal(held.remainingMs, 0.5);
  assert.equal(calls.length, 0);
  clock.advance(0.5);
  assert.equal(held.valid, false);
  assert.equal(calls.length, 1, 'lost at the guard');
  assert.equal(calls[0].at, held.deadline - 20);
  assert.equal(calls[0].e.codeName, 'DEADLINE_EXCEEDED');
  assert.equal(held.signal.reason, calls[0].e);
  clock.advance(60_000);
  assert.equal(calls.length, 1, 'once');
  assert.ok(await eventually(() => fake.seen.release.length === 1), 'a lease that ran out with no stream is given back');
});

test('keep-alive: requests every ttl/4 with rising sequences and the same token', async (t) => {
  const { fake, client } = await setup(t, { keepAlive: (stream, request) => answer(stream, request, 200) });
  const held = await client.acquire('fast', { ttlMs: 200 });
  held.keepAlive();
  await sleep(420);
  assert.ok(held.valid, 'renewals kept it valid past its ttl');
  const requests = fake.seen.keepAlive.map((k) => k.request);
  assert.ok(requests.length >= 5 && requests.length <= 12, `${requests.length} requests in 420 ms`);
  requests.forEach((r, i) => {
    assert.equal(r.sequence, String(i + 1));
    assert.equal(r.token, fake.seen.acquire[0].request.token);
    assert.equal(millis(r.ttl), 200);
  });
  assert.equal(await held.release(), true);
});

test('keep-alive moves the deadline only from the send time of an echoed sequence, only forward', async (t) => {
  let stream;
  let request;
  const { client } = await setup(t, {
    keepAlive(s, r) {
      stream = s;
      request = r;
    },
  });
  const held = await client.acquire('echo', { ttlMs: 4000 }); // one request a second
  const granted = held.deadline;
  const startedAt = performance.now();
  held.keepAlive();
  assert.ok(await eventually(() => request !== undefined));
  const arrivedAt = stream.requests[0].at;
  assert.equal(request.sequence, '1');

  const answers = recordAnswers(t); // processed: not a sleep that passes when they never came
  answer(stream, request, 10_000, '999'); // a sequence never sent
  answer(stream, request, 10_000, '0'); // no sequence
  await answers.processed(2);
  assert.equal(held.deadline, granted, 'an unknown sequence does not move the deadline');

  await sleep(150);
  const answeredAt = performance.now();
  answer(stream, request, 3000, '1');
  assert.ok(await eventually(() => held.deadline !== granted));
  assert.ok(held.deadline >= startedAt + 3000, 'counted from the send time');
  assert.ok(held.deadline <= arrivedAt + 3000, 'not later than the request arrived');
  assert.ok(held.deadline <= answeredAt + 3000 - 150, 'not from the answer');
  const moved = held.deadline;

  answer(stream, request, 500, '1'); // an older, shorter renewal
  await answers.processed(4);
  assert.equal(held.deadline, moved, 'the deadline only moves forward');
  assert.equal(await held.release(), true);
});

test('extend counts from its send time; NOT_FOUND is a LeaseLostError and a loss', async (t) => {
  let notFound = false;
  const { fake, client } = await setup(t, {
    extend(call, cb) {
      if (notFound) {
        cb(failure(status.NOT_FOUND, `resource '${call.request.resource}' is not held`));
      } else {
        setTimeout(() => cb(null, { lease: lease(call.request.resource, call.request.token, 3000) }), 200);
      }
    },
  });
  const held = await client.acquire('ext', { ttlMs: 1000 });
  const before = performance.now();
  await held.extend(3000);
  assert.equal(millis(fake.seen.extend[0].request.ttl), 3000);
  assert.equal(fake.seen.extend[0].request.token, fake.seen.acquire[0].request.token);
  assert.ok(held.deadline >= before + 3000 && held.deadline <= before + 3000 + 50);
  notFound = true;
  let lost;
  held.onLost((e) => { lost = e; });
  await assert.rejects(held.extend(3000), (e) => e instanceof LeaseLostError && e.codeName === 'NOT_FOUND');
  assert.ok(lost instanceof LeaseLostError);
  assert.equal(held.valid, false);
});

test('withLock keeps the lease alive, releases after, and returns the result', async (t) => {
  const { fake, client } = await setup(t, { keepAlive: (stream, request) => answer(stream, request, 300) });
  const result = await client.withLock('work', { ttlMs: 300, waitMs: 0 }, async (held) => {
    await sleep(500);
    assert.ok(held.valid, 'kept alive past its ttl');
    return 'done';
  });
  assert.equal(result, 'done');
  assert.equal(fake.seen.streams[0].ended, true, 'released by half-closing');
});

test('withLock rejects with LeaseLostError after the work settles when the lease was lost', async (t) => {
  const { fake, client } = await setup(t, {
    keepAlive(stream, request) {
      answer(stream, request, 1000);
      setTimeout(() => stream.emit('error', failure(status.NOT_FOUND, 'taken over')), 50);
    },
  });
  let settled = false;
  let sawAbort = false;
  await assert.rejects(client.withLock('work', { ttlMs: 1000 }, async (held) => {
    held.signal.addEventListener('abort', () => { sawAbort = true; });
    // Until told: no sleep that the loss has to beat.
    await new Promise((resolve) => held.signal.addEventListener('abort', resolve, { once: true }));
    settled = true;
    return 'too late';
  }), (e) => e instanceof LeaseLostError && e.codeName === 'NOT_FOUND');
  assert.ok(settled, 'the work ran to its end first');
  assert.ok(sawAbort, 'the work could watch lease.signal');
  assert.equal(fake.seen.release.length, 1, 'a lost lease is still given back with a Release');
});

test('no token in the string, inspect or JSON forms of a lease, a client or an error', async (t) => {
  const { fake, client } = await setup(t, {
    keepAlive(stream, request) {
      answer(stream, request, 1000);
      setTimeout(() => stream.emit('error', failure(status.NOT_FOUND, "resource 'secret' is not held")), 50);
    },
  });
  const held = await client.acquire('secret', { ttlMs: 1000 });
  const token = fake.seen.acquire[0].request.token;
  let lost;
  held.keepAlive().onLost((e) => { lost = e; });
  const forms = [String(held), inspect(held), inspect(held, { showHidden: true, depth: 10 }), JSON.stringify(held),
    String(client), inspect(client, { showHidden: true, depth: 10 }), JSON.stringify(client)];
  assert.match(forms[0], /^Lease\[resource=secret, fencingToken=7, remaining=\d+ms\]$/);
  assert.deepEqual(Object.keys(JSON.parse(forms[3])), ['resource', 'fencingToken', 'valid', 'remainingMs']);
  assert.ok(await eventually(() => lost !== undefined));
  const extendError = await held.extend(1000).catch((e) => e);
  for (const e of [lost, extendError]) {
    forms.push(String(e), e.message, e.stack, inspect(e, { showHidden: true, depth: 10 }), JSON.stringify(e));
  }
  forms.push(inspect(held, { showHidden: true, depth: 10 }));
  for (const form of forms) {
    assert.ok(!form.includes(token), `a token in: ${form}`);
  }
});
