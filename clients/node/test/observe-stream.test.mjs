// observe(election, { signal }) as an async iterable of leader states.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LockClient, Observation } from '../dist/index.js';
import { eventually, failure, recordAnswers, settled, startFake, status } from './fake-server.mjs';

async function setup(t, handlers) {
  const fake = await startFake(handlers);
  const client = new LockClient(fake.address, { retry: { maxAttempts: 3, initialBackoffMs: 5, maxBackoffMs: 20 } });
  t.after(() => {
    client.close();
    fake.close();
  });
  return { fake, client };
}

const A = { leader: { value: 'a', term: '5' } };
const B = { leader: { value: 'b', term: '6' } };
const NONE = {};

test('for await: the current state, then every change, across a reopened stream, without repeats', async (t) => {
  const { fake, client } = await setup(t, {
    observe(call, n) {
      if (n === 1) {
        call.write(NONE);
        call.write(A);
        call.emit('error', failure(status.UNAVAILABLE, 'server shutting down'));
      } else {
        call.write(A); // already passed on
        call.write({ leader: { value: 'old', term: '4' } }); // an older term
        call.write(B);
      }
    },
  });
  const states = [];
  const observation = client.observe('watched');
  assert.ok(observation instanceof Observation);
  for await (const leader of observation) {
    states.push(leader);
    if (states.length === 3) break;
  }
  assert.deepEqual(states, [null, { value: 'a', term: 5n }, { value: 'b', term: 6n }]);
  assert.equal(typeof states[1].term, 'bigint');
  assert.equal(observation.closed, true, 'leaving the loop closes it');
  assert.ok(await eventually(() => fake.seen.observe.at(-1).cancelled === true), 'and cancels its stream');
});

test('the signal ends the iteration, also while a read waits; an aborted signal gives an empty one', async (t) => {
  const { fake, client } = await setup(t, { observe: (call) => call.write(A) });
  const controller = new AbortController();
  const states = [];
  const loop = (async () => {
    for await (const leader of client.observe('stop', { signal: controller.signal })) {
      states.push(leader);
    }
  })();
  assert.ok(await eventually(() => states.length === 1));
  controller.abort(); // the loop waits for the next state now
  await loop;
  assert.deepEqual(states, [{ value: 'a', term: 5n }]);
  assert.ok(await eventually(() => fake.seen.observe[0].cancelled === true), 'its stream is cancelled');

  const empty = client.observe('stop', { signal: AbortSignal.abort() });
  assert.equal(empty.closed, true);
  assert.deepEqual(await empty.next(), { done: true, value: undefined });
  assert.equal(fake.seen.observe.length, 1, 'no stream opened');
});

test('a reader slower than the changes still gets every state, in order; close() drops what it has not read', async (t) => {
  const answers = recordAnswers(t);
  const { client } = await setup(t, {
    observe(call) {
      call.write(NONE);
      call.write(A);
      call.write(B);
    },
  });
  const observation = client.observe('slow');
  await answers.processed(3); // all three arrived before the first read
  assert.deepEqual(await observation.next(), { done: false, value: null });
  assert.deepEqual(await observation.next(), { done: false, value: { value: 'a', term: 5n } });
  observation.close();
  assert.deepEqual(await observation.next(), { done: true, value: undefined });
});

test('close() ends a read that waits; the callback form is the same observation', async (t) => {
  const { client } = await setup(t, { observe: () => {} });
  const observation = client.observe('quiet');
  const pending = observation.next();
  observation.close();
  assert.deepEqual(await pending, { done: true, value: undefined });

  const calls = [];
  const called = client.observe('quiet', (leader) => calls.push(leader));
  assert.ok(called instanceof Observation);
  called.close();
  await settled();
  assert.deepEqual(calls, []);
  assert.throws(() => client.observe('quiet', 42), TypeError);
});
