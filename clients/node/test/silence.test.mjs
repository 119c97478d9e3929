// A kept stream that stops answering (issue 40's silent stream rule): once its oldest unanswered
// request has waited ttl/4, the client leaves it (open: grpc-js's cancel would half-close it,
// which a paused replica takes for a release when it wakes), makes new connections and opens a
// new stream at once with the same first request, without a loss; the silent stream is let go
// only when the grant is over. A replacement is held to a third of the bound until it answers,
// and every reopen after a silence goes at once. A candidate still waiting to lead is not held to it. The silence
// is a step of a clock the test moves (ManualClock), not a sleep.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { LockClient } from '../dist/index.js';
import { Connection } from '../dist/connection.js';
import { SlowestAnswer, boundMs, silenceMs } from '../dist/kept.js';
import {
  duration, eventually, lease, manualClock, recordAnswers, settled, startFake,
} from './fake-server.mjs';

/** A backoff far longer than the test waits for a reopen: a reopen that came sooner waited none. */
const slowBackoff = { maxAttempts: 4, initialBackoffMs: 2000, maxBackoffMs: 2000 };

async function setup(t, handlers, opts = {}) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry: slowBackoff, ...opts });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

function answer(stream, request) {
  stream.write({ lease: lease(request.resource, request.token, 0.99 * millis(request.ttl)), state: 'LEASE_STATE_HELD', sequence: request.sequence });
}

function millis(d) {
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

test('the silence bound is a quarter of the ttl', () => {
  assert.equal(silenceMs(3000), 750);
});

// Issue 40: a slow replica is not a silent one; a third of the bound was not enough for a
// restarted replica, and every grant reopening every third of a period made it slower.
test('the bound is at least twice the slowest recent answer, up to twice itself', () => {
  assert.equal(boundMs(750, true, 0), 250);
  assert.equal(boundMs(750, true, 200), 400);
  assert.equal(boundMs(750, false, 600), 1200);
  assert.equal(boundMs(750, false, 2000), 1500);
});

test('the slowest answer fades by half every ttl, and one later than the ttl is left out', () => {
  const slowest = new SlowestAnswer();
  assert.equal(slowest.ms(0, 1000), 0);
  slowest.answered(800, 10000, 1000);
  slowest.answered(300, 10500, 1000); // faster: the slower one still counts
  assert.equal(slowest.ms(10000, 1000), 800);
  assert.equal(slowest.ms(14000, 1000), 400);
  slowest.answered(4500, 14000, 1000); // later than the ttl (4 periods): a stopped replica
  assert.equal(slowest.ms(14000, 1000), 400);
});

test('a kept stream that stops answering is left open, and a new one opened at once on new connections', async (t) => {
  const clock = manualClock(t);
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(null, { lease: lease(call.request.resource, call.request.token, 0.99 * millis(call.request.ttl)) }),
    keepAlive(stream, request) {
      if (fake.seen.streams.indexOf(stream) > 0) {
        answer(stream, request); // the first stream says nothing, as a frozen replica
      }
    },
  });
  const held = await client.acquire('orders/1', { ttlMs: 4000 }); // silence bound 1 s (on the test's clock)
  const token = fake.seen.acquire[0].request.token;
  const lost = [];
  held.keepAlive().onLost((e) => lost.push(e));
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 1));
  clock.advance(999);
  await settled();
  assert.equal(fake.seen.streams.length, 1);
  const silencedAt = performance.now();
  clock.advance(2); // the first request has waited 1 s: left here
  assert.ok(await eventually(() => fake.seen.keepAlive.length >= 2), 'a second stream');
  assert.ok(fake.seen.keepAlive[1].at - silencedAt < 1000, 'reopened without the (1 to 2 s) backoff');
  const [first, second] = fake.seen.streams;
  assert.equal(second.requests[0].request.token, token);
  assert.ok(Number(second.requests[0].request.sequence) > Number(first.requests[0].request.sequence));
  assert.notEqual(second.getPeer(), first.getPeer(), 'over a new connection');
  assert.ok(await eventually(() => held.deadline > clock.now() + 3000), 'renewed through the new stream');
  await settled();
  assert.ok(!first.ended && !first.cancelled, 'the silent stream is neither half-closed nor cancelled');
  assert.equal(held.valid, true);
  assert.deepEqual(lost, []);
  assert.equal(await held.release(), true);
  assert.ok(second.ended, 'released by the half-close of the new stream');
  assert.equal(fake.seen.release.length, 0);
  assert.ok(await eventually(() => first.ended || first.cancelled), 'the silent stream let go once released');
});

test('a late answer of the silent stream still counts, dated by the request it echoes', async (t) => {
  const clock = manualClock(t);
  const late = [];
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(null, { lease: lease(call.request.resource, call.request.token, 0.99 * millis(call.request.ttl)) }),
    keepAlive(stream, request) {
      late.push(() => answer(stream, request)); // every stream only answers when the test says
    },
  });
  const held = await client.acquire('orders/1', { ttlMs: 4000 });
  held.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 1));
  const firstSent = clock.now();
  clock.advance(1001); // silent: a second stream, the first one still read
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 2));
  const answered = recordAnswers(t);
  late[0](); // the first stream's replica was only slow
  await answered.processed(1);
  assert.equal(held.deadline, firstSent + 0.99 * 4000);
  assert.equal(held.valid, true);
  assert.equal(await held.release(), true);
});

test('a replacement is held to a third of the bound until it answers, and every reopen after a silence goes at once', async (t) => {
  const clock = manualClock(t);
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(null, { lease: lease(call.request.resource, call.request.token, 0.99 * millis(call.request.ttl)) }),
    keepAlive(stream, request) {
      if (fake.seen.streams.indexOf(stream) >= 4) {
        answer(stream, request); // the first four streams say nothing
      }
    },
  });
  const held = await client.acquire('orders/1', { ttlMs: 6000 }); // bound 1.5 s, a third of it 500 ms
  const lost = [];
  held.keepAlive().onLost((e) => lost.push(e));
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 1));
  clock.advance(1501); // the first stream is silent: a replacement at once
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 2));
  for (let streams = 2; streams <= 4; streams++) {
    clock.advance(499);
    await settled();
    assert.equal(fake.seen.streams.length, streams, `replacement ${streams - 1} within a third of the bound`);
    clock.advance(2);
    // The retry's backoff here is 2 s of real time: a stream within a second waited none.
    const at = performance.now();
    assert.ok(await eventually(() => fake.seen.keepAlive.length === streams + 1), `stream ${streams + 1}`);
    assert.ok(fake.seen.keepAlive[streams].at - at < 1000, 'at once, no backoff');
  }
  assert.ok(await eventually(() => held.deadline > clock.now() + 5000), 'renewed through the fifth stream');
  assert.equal(held.valid, true);
  assert.deepEqual(lost, []);
  assert.equal(await held.release(), true);
});

// Issue 40: a stream that just moved (its replica shut down) has no answer of its own, and
// hundreds moved with it to replicas busy starting, which answer each of them late. Held to a
// quarter of its ttl, every one was replaced, and each replacement made the replicas slower
// still. The answers the client's other grants get say how slow.
test('the bound follows the slow answers of the client\'s other grants', async (t) => {
  const clock = manualClock(t);
  const slowAnswers = [];
  const streamsOf = (resource) => fake.seen.streams.filter((s) => s.requests[0]?.request.resource === resource);
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(null, { lease: lease(call.request.resource, call.request.token, 0.99 * millis(call.request.ttl)) }),
    keepAlive(stream, request) {
      if (request.resource === 'orders/slow') {
        slowAnswers.push(() => answer(stream, request));
      } else if (streamsOf('orders/moved').indexOf(stream) > 0) {
        answer(stream, request); // the first stream of orders/moved says nothing
      }
    },
  });
  const slow = await client.acquire('orders/slow', { ttlMs: 4000 }); // silence bound 1 s (on the test's clock)
  const moved = await client.acquire('orders/moved', { ttlMs: 4000 });
  slow.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 1));
  clock.advance(900);
  const answered = recordAnswers(t);
  slowAnswers[0](); // answered 0.9 s after its request: within its own bound
  await answered.processed(1);
  moved.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 2));
  clock.advance(1200); // past its own 1 s, within twice the client's slowest (0.9 s)
  await settled();
  assert.equal(streamsOf('orders/moved').length, 1);
  clock.advance(700); // (the slowest fades by half every ttl: here to 0.65 s)
  assert.ok(await eventually(() => streamsOf('orders/moved').length === 2), 'replaced once twice the slowest passed');
  assert.ok(await eventually(() => moved.deadline > clock.now() + 3000), 'renewed through the new stream');
  assert.equal(moved.valid, true);
  assert.equal(await moved.release(), true);
  assert.equal(await slow.release(), true);
});

// A frozen replica that woke answers late on the streams left on it (this client keeps them open
// until the grant is over): that says the replica stopped, not that every replica is slow.
// Counted for the other grants, it held them on the next silent replica for twice as long
// (replica-silent lost a Node lease so).
test('a late answer on a stream left for its silence does not lift the other grants\' bound', async (t) => {
  const clock = manualClock(t);
  const frozenAnswers = [];
  const streamsOf = (resource) => fake.seen.streams.filter((s) => s.requests[0]?.request.resource === resource);
  const { fake, client } = await setup(t, {
    acquire: (call, cb) => cb(null, { lease: lease(call.request.resource, call.request.token, 0.99 * millis(call.request.ttl)) }),
    keepAlive(stream, request) {
      const first = streamsOf(request.resource).indexOf(stream) === 0;
      if (first && request.resource === 'orders/woke') {
        frozenAnswers.push(() => answer(stream, request)); // a frozen replica: answers once it wakes
      } else if (!first) {
        answer(stream, request); // the first stream of orders/moved says nothing
      }
    },
  });
  const frozen = await client.acquire('orders/woke', { ttlMs: 4000 }); // silence bound 1 s (on the test's clock)
  const moved = await client.acquire('orders/moved', { ttlMs: 4000 });
  frozen.keepAlive();
  assert.ok(await eventually(() => fake.seen.keepAlive.length === 1));
  clock.advance(1001); // silent: a second stream, which answers
  assert.ok(await eventually(() => frozen.deadline > clock.now() + 3000), 'renewed through the second stream');
  clock.advance(500);
  const answered = recordAnswers(t);
  frozenAnswers[0](); // the first stream's answer, 1.5 s after its request
  await answered.processed(1);
  moved.keepAlive();
  assert.ok(await eventually(() => streamsOf('orders/moved').length === 1));
  clock.advance(1001); // its own bound: replaced, as if no grant had been slow
  assert.ok(await eventually(() => streamsOf('orders/moved').length === 2), 'replaced within its own bound');
  assert.equal(moved.valid, true);
  assert.equal(await moved.release(), true);
  assert.equal(await frozen.release(), true);
});

test('a leader\'s silent stream is resumed with its term; a candidate still waiting is not held to the bound', async (t) => {
  const clock = manualClock(t);
  let leadNow = false;
  const waiting = [];
  const { fake, client } = await setup(t, {
    campaign(stream, request, n) {
      const reply = () => stream.write({ term: '7', value: request.value, validity: duration(0.99 * millis(request.ttl)),
        state: 'LEASE_STATE_HELD', sequence: request.sequence });
      if (stream.index === 0) {
        if (n === 1) {
          if (leadNow) reply();
          else waiting.push(reply); // answered when the test says so
        }
        return; // leading, and then silent
      }
      reply();
    },
  });
  const campaigning = client.campaign('e', 'v', { ttlMs: 4000 });
  assert.ok(await eventually(() => fake.seen.campaign.length === 1));
  clock.advance(2000); // two silence bounds while waiting: nothing happens
  await settled();
  assert.equal(fake.seen.campaignStreams.length, 1);
  leadNow = true;
  waiting.shift()();
  const leadership = await campaigning;
  const lost = [];
  leadership.onLost((e) => lost.push(e));
  const shown = leadership.proclaim('w'); // a request now, which the leader's stream leaves unanswered
  assert.ok(await eventually(() => fake.seen.campaign.length === 2));
  clock.advance(1001);
  await shown; // answered on the new stream
  const resumed = fake.seen.campaignStreams[1].requests[0].request;
  assert.equal(resumed.token, fake.seen.campaignStreams[0].requests[0].request.token);
  assert.equal(resumed.resume, true);
  assert.equal(resumed.value, 'w');
  assert.equal(leadership.term, 7n);
  assert.equal(leadership.isLeader, true);
  assert.deepEqual(lost, []);
  assert.equal(await leadership.resign(), true);
});

test('a connection is made anew once per silence: a stream of an older connection asks for nothing', () => {
  const connection = new Connection('127.0.0.1:1', grpc.credentials.createInsecure(), {});
  try {
    const before = connection.lock;
    connection.renew(0);
    assert.equal(connection.generation, 1);
    assert.notEqual(connection.lock, before);
    const renewed = connection.lock;
    connection.renew(0); // a second stream of the same silence
    assert.equal(connection.generation, 1);
    assert.equal(connection.lock, renewed);
  } finally {
    connection.close();
  }
});

test('HTTP/2 keepalive is refused on a LockClient\'s channel, with why', () => {
  assert.throws(() => new LockClient({ address: '127.0.0.1:1', channelOptions: { 'grpc.keepalive_time_ms': 2000 } }),
    (e) => e instanceof RangeError && /half-close/.test(e.message));
  new LockClient({ address: '127.0.0.1:1', channelOptions: { 'grpc.keepalive_time_ms': -1 } }).close();
});
