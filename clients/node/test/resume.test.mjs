// Rules 14 to 16 of clients/conformance/README.md: a kept stream that breaks is resumed, not
// lost; every ttl change of a kept lease goes through its stream; several replicas.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { LockClient } from '../dist/index.js';
import { channelTarget } from '../dist/target.js';
import {
  duration, eventually, failure, lease, manualClock, millis, recordAnswers, sleep, startFake, status,
} from './fake-server.mjs';

const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const retry = { maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 40 };

async function setup(t, handlers, opts = {}) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry, ...opts });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

function answer(stream, request, validityMs, { sequence = request.sequence, fencingToken = '7' } = {}) {
  stream.write({ lease: lease(request.resource, request.token, validityMs, fencingToken), state: 'LEASE_STATE_HELD', sequence });
}

function lead(stream, request, validityMs, { term = '9', sequence = request.sequence, value = request.value } = {}) {
  stream.write({ term, value, validity: duration(validityMs), state: 'LEASE_STATE_HELD', sequence });
}

const unavailable = () => failure(status.UNAVAILABLE, 'the server is shutting down');

test('a kept stream that ends UNAVAILABLE is reopened with the same token; sequences go on rising; the deadline does not move while it is down; no loss', async (t) => {
  let hold; // the answers on the second stream wait for the test
  let resumed = false;
  const { fake, client } = await setup(t, {
    keepAlive(stream, request, n) {
      if (fake.seen.streams.indexOf(stream) === 0) {
        answer(stream, request, 2000);
        if (n === 2) setTimeout(() => stream.emit('error', unavailable()), 10);
      } else if (n === 1) {
        hold = () => {
          resumed = true;
          answer(stream, request, 2000);
        };
      } else if (resumed) {
        answer(stream, request, 2000);
      }
    },
  });
  const held = await client.acquire('resumed', { ttlMs: 2000 }); // a request every 500 ms
  const lost = [];
  held.keepAlive().onLost((e) => lost.push(e));
  assert.ok(await eventually(() => hold !== undefined, 3000), 'a second stream');
  const [first, second] = fake.seen.streams;
  const token = fake.seen.acquire[0].request.token;
  const before = held.deadline;
  await sleep(100);
  assert.equal(held.deadline, before, 'the deadline does not move while no renewal lands');
  assert.ok(held.valid);
  const resumedWith = second.requests[0];
  assert.equal(resumedWith.request.token, token, 'the same token');
  assert.equal(resumedWith.request.resource, 'resumed');
  assert.equal(millis(resumedWith.request.ttl), 2000);
  const lastOfFirst = Number(first.requests.at(-1).request.sequence);
  assert.equal(Number(resumedWith.request.sequence), lastOfFirst + 1, 'sequences rise across streams');
  hold();
  assert.ok(await eventually(() => held.deadline > before), 'the resumed stream renews');
  assert.ok(held.deadline <= resumedWith.at + 2000, 'dated by the resumed request');
  assert.equal(held.fencingToken, 7n);
  assert.equal(lost.length, 0, 'no loss');
  assert.equal(fake.seen.release.length, 0);
  assert.equal(await held.release(), true);
  assert.equal(second.ended, true, 'released by half-closing the resumed stream');
  assert.equal(fake.seen.streams.length, 2);
});

test('a kept lease whose every reopen fails is lost once, at its guarded deadline, and no stream is opened after', async (t) => {
  const clock = manualClock(t); // the deadline's clock; the reopens go on in real time
  const { fake, client } = await setup(t, {
    keepAlive(stream, request) {
      if (fake.seen.streams.indexOf(stream) === 0) {
        answer(stream, request, 600);
        setTimeout(() => stream.emit('error', failure(status.INTERNAL, 'Received RST_STREAM with code 2')), 10);
      } else {
        stream.emit('error', unavailable());
      }
    },
  });
  const held = await client.acquire('gone', { ttlMs: 600 }); // guard 30 ms
  const calls = [];
  held.keepAlive().onLost((e) => calls.push({ at: clock.now(), e }));
  assert.ok(await eventually(() => fake.seen.streams.length >= 3, 3000), 'reopened again and again while it could');
  clock.advanceTo(held.deadline - 30 - 0.5);
  assert.equal(calls.length, 0, 'not before the guard');
  assert.ok(held.valid);
  clock.advance(0.5);
  assert.equal(calls.length, 1, 'lost at the guard');
  assert.equal(calls[0].e.codeName, 'DEADLINE_EXCEEDED');
  assert.equal(calls[0].at, held.deadline - 30, 'before the deadline, by the guard');
  const streams = fake.seen.streams.length;
  await sleep(200);
  assert.equal(calls.length, 1, 'once');
  assert.equal(fake.seen.streams.length, streams, 'no reopening after the loss');
  assert.equal(held.valid, false);
});

test('NOT_FOUND on a reopened stream is a loss, once; so is PERMISSION_DENIED', async (t) => {
  const clock = manualClock(t); // the deadline's clock; the streams go on in real time
  for (const code of [status.NOT_FOUND, status.PERMISSION_DENIED]) {
    const { fake, client } = await setup(t, {
      keepAlive(stream, request) {
        if (fake.seen.streams.indexOf(stream) === 0) {
          answer(stream, request, 2000);
          setTimeout(() => stream.emit('error', unavailable()), 10);
        } else {
          stream.emit('error', failure(code, "resource 'taken' is not held"));
        }
      },
    });
    const held = await client.acquire('taken', { ttlMs: 2000 });
    const calls = [];
    held.keepAlive().onLost((e) => calls.push(e));
    assert.ok(await eventually(() => calls.length > 0, 3000));
    assert.equal(calls[0].code, code);
    clock.advance(60_000); // past the deadline: the loss timer does not report it again
    assert.equal(calls.length, 1);
    await sleep(100); // a reopen would come within the backoff (at most 40 ms)
    assert.equal(fake.seen.streams.length, 2, 'not reopened after a final end');
    assert.equal(held.valid, false);
  }
});

test('release while the stream is down opens a stream for it and half-closes it', async (t) => {
  const { fake, client } = await setup(t, {
    keepAlive(stream, request) {
      answer(stream, request, 3000);
      if (fake.seen.streams.indexOf(stream) === 0) setTimeout(() => stream.emit('error', unavailable()), 10);
    },
  }, { retry: { maxAttempts: 3, initialBackoffMs: 1000, maxBackoffMs: 1000 } }); // down for 500 ms at least
  const held = await client.acquire('down', { ttlMs: 3000 });
  held.keepAlive();
  assert.ok(await eventually(() => fake.seen.streams[0]?.requests.length >= 1));
  await sleep(100);
  assert.equal(fake.seen.streams.length, 1, 'still waiting to reopen');
  assert.equal(await held.release(), true);
  assert.equal(fake.seen.streams.length, 2);
  assert.equal(fake.seen.streams[1].ended, true, 'half-closed');
  assert.equal(fake.seen.streams[1].requests[0].request.token, fake.seen.acquire[0].request.token);
  await sleep(1100);
  assert.equal(fake.seen.streams.length, 2, 'no reopening after the release');
});

test('extend on a kept lease goes through its stream: longer, then shorter; a shorter ttl cuts the deadline at once; earlier answers are ignored', async (t) => {
  const { fake, client } = await setup(t, {
    keepAlive(stream, request) {
      const ttl = millis(request.ttl);
      if (stream.lastTtl !== undefined && ttl !== stream.lastTtl) {
        // The first request with a new ttl: an answer to the request before it first (which the
        // client must ignore, however long its validity), then the real one a little later.
        answer(stream, request, 60_000, { sequence: String(Number(request.sequence) - 1) });
        setTimeout(() => answer(stream, request, ttl - 10), 100);
      } else {
        answer(stream, request, ttl - 10);
      }
      stream.lastTtl = ttl;
    },
  });
  const held = await client.acquire('ttl', { ttlMs: 1000 }); // guard 50 ms
  held.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 1));
  await sleep(50);

  // Longer.
  const longerAt = performance.now();
  await held.extend(4000);
  const tookLonger = performance.now() - longerAt;
  assert.equal(fake.seen.extend.length, 0, 'no unary Extend');
  const longer = fake.seen.keepAlive.find((k) => millis(k.request.ttl) === 4000);
  assert.ok(longer !== undefined, 'a KeepAlive request with the new ttl');
  assert.ok(tookLonger >= 95, `waited for the answer that echoes it (${tookLonger} ms)`);
  assert.ok(held.deadline >= longerAt + 3990 && held.deadline <= longer.at + 3990,
    'dated by that request, not by the earlier answer with 60 s');
  assert.equal(held.ttlMs, 4000);
  const requestsBefore = fake.seen.keepAlive.length;
  await sleep(1300);
  const later = fake.seen.keepAlive.slice(requestsBefore);
  assert.ok(later.length >= 1 && later.length <= 2, `a request every ttl/4 = 1000 ms: ${later.length} in 1300 ms`);
  assert.ok(later.every((k) => millis(k.request.ttl) === 4000), 'later requests carry the new ttl');

  // Shorter.
  const shorterAt = performance.now();
  const answers = recordAnswers(t);
  const pending = held.extend(1200);
  const cut = held.deadline;
  assert.ok(cut <= shorterAt + 1200 * 0.99 - 2 + 5, `cut at once: ${cut - shorterAt} ms left`);
  assert.ok(cut >= shorterAt + 1200 * 0.99 - 2 - 50, `to send time + ttl - drift: ${cut - shorterAt} ms left`);
  await answers.processed(1); // the fake answers the earlier request first
  assert.equal(held.deadline, cut, 'the answer to an earlier request (60 s) is ignored');
  await pending;
  const shorter = fake.seen.keepAlive.find((k) => millis(k.request.ttl) === 1200);
  assert.ok(held.deadline <= shorter.at + 1190, 'then dated by the shorter renewal');
  assert.ok(held.remainingMs <= 1200 - 60, `remaining ${held.remainingMs}`);
  assert.ok(held.valid);
  const requests = fake.seen.keepAlive.length;
  await assert.rejects(held.extend(0), (e) => e.codeName === 'INVALID_ARGUMENT', 'refused here, not sent');
  assert.equal(fake.seen.keepAlive.length, requests);
  assert.ok(held.valid);
  assert.equal(held.ttlMs, 1200);
  assert.equal(await held.release(), true);
});

test('a shorter ttl that the stream cannot renew: the lease runs out at the cut deadline', async (t) => {
  let frozen = false;
  const { fake, client } = await setup(t, {
    keepAlive(stream, request) {
      if (!frozen) answer(stream, request, millis(request.ttl) - 10);
    },
  }, { callTimeoutMs: 2000 });
  const held = await client.acquire('cut', { ttlMs: 4000 });
  const calls = [];
  held.keepAlive().onLost((e) => calls.push({ at: performance.now(), e }));
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 1));
  await sleep(50);
  assert.ok(held.remainingMs > 3000);
  frozen = true; // the server answers nothing more, as if frozen
  const at = performance.now();
  const pending = held.extend(400).catch((e) => e);
  assert.ok(held.remainingMs <= 400 - 20, 'the belief is cut at once');
  assert.ok(await eventually(() => calls.length > 0, 2000));
  assert.ok(calls[0].at - at < 400, `lost within the short ttl (${calls[0].at - at} ms)`);
  assert.equal(calls[0].e.codeName, 'DEADLINE_EXCEEDED');
  const rejected = await pending;
  assert.equal(rejected, calls[0].e, 'the pending extend fails with the loss');
});

test('a leader whose Campaign stream ends UNAVAILABLE resumes with its own token and resume=true, same term, no loss', async (t) => {
  let streams = 0;
  const { fake, client } = await setup(t, {
    campaign(stream, request, n) {
      if (stream.index === 0) {
        lead(stream, request, 2000, { term: '41' });
        if (n === 2) setTimeout(() => stream.emit('error', unavailable()), 10);
      } else {
        streams += 1;
        lead(stream, request, 2000, { term: '41' });
      }
    },
  });
  const leadership = await client.campaign('resume', 'v1', { ttlMs: 2000 });
  const lost = [];
  leadership.onLost((e) => lost.push(e));
  assert.ok(await eventually(() => streams > 0, 3000), 'reopened');
  const [first, second] = fake.seen.campaignStreams;
  const opening = first.requests[0].request;
  assert.match(opening.token, TOKEN, 'a client-made candidate token');
  assert.equal(opening.resume, false);
  const resumed = second.requests[0].request;
  assert.equal(resumed.token, opening.token, 'the same token');
  assert.equal(resumed.resume, true, 'resume: it was leading');
  assert.equal(resumed.election, 'resume');
  assert.equal(resumed.value, 'v1');
  assert.equal(millis(resumed.ttl), 2000);
  assert.equal(Number(resumed.sequence), Number(first.requests.at(-1).request.sequence) + 1, 'sequences rise across streams');
  await leadership.proclaim('v2');
  assert.equal(second.requests.at(-1).request.value, 'v2');
  assert.equal(leadership.term, 41n);
  assert.ok(leadership.isLeader);
  assert.ok(leadership.remainingMs > 1000 && leadership.remainingMs <= 2000 - 100, `remaining ${leadership.remainingMs}`);
  assert.equal(lost.length, 0);
  assert.equal(await leadership.resign(), true);
  assert.equal(second.ended, true, 'resigned by half-closing the resumed stream');
  assert.equal(leadership.remainingMs, 0);
});

test('a leader: NOT_FOUND on the resumed stream is a loss, once', async (t) => {
  const clock = manualClock(t); // the deadline's clock; the streams go on in real time
  const { fake, client } = await setup(t, {
    campaign(stream, request) {
      if (stream.index === 0) {
        lead(stream, request, 2000);
        setTimeout(() => stream.emit('error', unavailable()), 10);
      } else {
        stream.emit('error', failure(status.NOT_FOUND, "election 'gone': not the leader"));
      }
    },
  });
  const leadership = await client.campaign('gone', 'v', { ttlMs: 2000 });
  const calls = [];
  leadership.onLost((e) => calls.push(e));
  assert.ok(await eventually(() => calls.length > 0, 3000));
  assert.equal(calls[0].codeName, 'NOT_FOUND');
  assert.equal(fake.seen.campaignStreams[1].requests[0].request.resume, true);
  clock.advance(60_000); // past the deadline: the loss timer does not report it again
  assert.equal(calls.length, 1);
  await sleep(100); // a reopen would come within the backoff (at most 40 ms)
  assert.equal(fake.seen.campaignStreams.length, 2);
  assert.equal(leadership.isLeader, false);
});

test('a waiting candidate whose stream ends UNAVAILABLE campaigns again with the same token, resume=false', async (t) => {
  const { fake, client } = await setup(t, {
    campaign(stream, request, n) {
      if (stream.index === 0) {
        if (n === 1) setTimeout(() => stream.emit('error', unavailable()), 30);
      } else {
        lead(stream, request, 1000, { term: '3' });
      }
    },
  });
  const leadership = await client.campaign('waiting', 'v', { ttlMs: 1000 });
  const [first, second] = fake.seen.campaignStreams;
  assert.equal(second.requests[0].request.token, first.requests[0].request.token);
  assert.equal(second.requests[0].request.resume, false);
  assert.equal(leadership.term, 3n);
  await leadership.resign();
});

test('a waiting candidate whose streams keep failing at once gives up after the retry attempts', async (t) => {
  const { fake, client } = await setup(t, {
    campaign: (stream) => stream.emit('error', failure(status.UNAVAILABLE, 'no quorum')),
  });
  await assert.rejects(client.campaign('refused', 'v', { ttlMs: 1000 }), (e) => e.codeName === 'UNAVAILABLE');
  assert.equal(fake.seen.campaignStreams.length, retry.maxAttempts);
});

async function replicas(t, handlers) {
  const a = await startFake(handlers);
  const b = await startFake(handlers);
  const client = new LockClient([a.address, b.address], { retry: { maxAttempts: 4, initialBackoffMs: 20, maxBackoffMs: 100 } });
  t.after(() => {
    client.close();
    a.close();
    b.close();
  });
  return { a, b, client };
}

test('two replicas: the one a kept stream uses stops; the stream resumes on the other, same token, no loss', async (t) => {
  const { a, b, client } = await replicas(t, { keepAlive: (stream, request) => answer(stream, request, 3000) });
  assert.equal(client.target, `${a.address},${b.address}`);
  const held = await client.acquire('replicas', { ttlMs: 3000 });
  const lost = [];
  held.keepAlive().onLost((e) => lost.push(e));
  assert.ok(await eventually(() => a.seen.keepAlive.length + b.seen.keepAlive.length >= 1));
  const [used, other] = a.seen.keepAlive.length > 0 ? [a, b] : [b, a];
  const token = (a.seen.acquire[0] ?? b.seen.acquire[0]).request.token;
  const before = held.deadline;
  used.close();
  assert.ok(await eventually(() => other.seen.keepAlive.length >= 1, 3000), 'resumed on the other replica');
  assert.equal(other.seen.keepAlive[0].request.token, token);
  assert.ok(await eventually(() => held.deadline > before, 3000), 'renewed there');
  assert.ok(held.valid);
  assert.equal(lost.length, 0);
  assert.equal(await held.release(), true);
});

test('two replicas: the one a leadership streams through stops; it resumes on the other with the same term', async (t) => {
  const { a, b, client } = await replicas(t, { campaign: (stream, request) => lead(stream, request, 3000, { term: '12' }) });
  const leadership = await client.campaign('replicas', 'v', { ttlMs: 3000 });
  const lost = [];
  leadership.onLost((e) => lost.push(e));
  const [used, other] = a.seen.campaign.length > 0 ? [a, b] : [b, a];
  const token = used.seen.campaign[0].request.token;
  const before = leadership.deadline;
  used.close();
  assert.ok(await eventually(() => other.seen.campaign.length >= 1, 3000), 'resumed on the other replica');
  const resumed = other.seen.campaign[0].request;
  assert.equal(resumed.token, token);
  assert.equal(resumed.resume, true);
  assert.ok(await eventually(() => leadership.deadline > before, 3000));
  assert.equal(leadership.term, 12n);
  assert.ok(leadership.isLeader);
  assert.equal(lost.length, 0);
  assert.equal(await leadership.resign(), true);
});

test('addresses: a list (array or commas) of IP literals becomes one round_robin target; dns: and other targets pass through', () => {
  assert.equal(channelTarget('127.0.0.1:1'), '127.0.0.1:1');
  assert.equal(channelTarget('localhost:50051'), 'localhost:50051');
  assert.equal(channelTarget(['127.0.0.1:1', '127.0.0.2:2']), 'ipv4:127.0.0.1:1,127.0.0.2:2');
  assert.equal(channelTarget('127.0.0.1:1, 127.0.0.2:2'), 'ipv4:127.0.0.1:1,127.0.0.2:2');
  assert.equal(channelTarget(['[::1]:1', '[::1]:2']), 'ipv6:[::1]:1,[::1]:2');
  assert.equal(channelTarget('dns:redlockd.internal:50051'), 'dns:redlockd.internal:50051');
  assert.equal(channelTarget('ipv4:10.0.0.1:1,10.0.0.2:1'), 'ipv4:10.0.0.1:1,10.0.0.2:1');
  assert.throws(() => channelTarget(['a.example:1', 'b.example:1']), /dns: name/);
  assert.throws(() => channelTarget([]), TypeError);
  const client = new LockClient({ address: ['127.0.0.1:1', '127.0.0.2:2'] });
  assert.equal(client.target, '127.0.0.1:1,127.0.0.2:2');
  client.close();
});
