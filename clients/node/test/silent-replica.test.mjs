// An idempotent unary call through a replica that went silent (a frozen host, a partition: its
// connection stays open, nothing comes back) is retried on the other replica within the call's
// own deadline (issue 40): each attempt is held to half the call timeout, and the retry goes over
// new connections, on which the silent replica, whose handshake cannot complete, is not picked.
import assert from 'node:assert/strict';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { LockClient } from '../dist/index.js';
import { startFake } from './fake-server.mjs';

/** Long enough for a Redis-free fake to answer many times over, short enough for a quick test. */
const CALL_TIMEOUT_MS = 1000;

/**
 * A TCP relay to `port` that, once `blackhole()` is called, drops every byte both ways and closes
 * nothing, on the connections open then and on those made later.
 */
async function blackholeProxy(port) {
  let dropping = false;
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const [from, to] of [[client, upstream], [upstream, client]]) {
      sockets.add(from);
      from.on('data', (bytes) => {
        if (!dropping) to.write(bytes);
      });
      from.on('error', () => {});
      from.on('close', () => to.destroy());
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${server.address().port}`,
    blackhole() {
      dropping = true;
    },
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

/** Two replicas, the second behind a proxy; a client that has a connection to each. */
async function setup(t) {
  const [up, behind] = [await startFake(), await startFake()];
  const proxy = await blackholeProxy(Number(behind.address.split(':')[1]));
  const client = new LockClient([up.address, proxy.address], {
    callTimeoutMs: CALL_TIMEOUT_MS, retry: { maxAttempts: 4, initialBackoffMs: 10, maxBackoffMs: 50 },
  });
  t.after(() => {
    client.close();
    proxy.close();
    up.close();
    behind.close();
  });
  // round_robin puts calls on each replica in turn once both are connected.
  for (let i = 0; i < 20 && (up.seen.leader.length === 0 || behind.seen.leader.length === 0); i++) {
    await client.leader('warm-up');
  }
  assert.ok(up.seen.leader.length > 0 && behind.seen.leader.length > 0, 'connected to both replicas');
  return { up, behind, proxy, client };
}

/** `promise`'s outcome and how long it took. */
async function timed(promise) {
  const start = performance.now();
  try {
    return { value: await promise, ms: performance.now() - start };
  } catch (error) {
    return { error, ms: performance.now() - start };
  }
}

test('unary calls through a replica gone silent are answered by the other one, within the call timeout', async (t) => {
  const { up, proxy, client } = await setup(t);
  const leases = [];
  for (let i = 0; i < 2; i++) {
    leases.push(await client.acquire(`orders/${i}`, { ttlMs: 10_000 }));
  }
  const releasesBefore = up.seen.release.length;
  proxy.blackhole();
  // Calls one after the other: round_robin would put every second one on the silent replica.
  const outcomes = [
    await timed(client.leader('scheduler')),
    await timed(leases[0].extend(10_000)),
    await timed(leases[0].release()),
    await timed(leases[1].release()),
    await timed(client.leader('scheduler')),
  ];
  for (const [i, o] of outcomes.entries()) {
    assert.equal(o.error, undefined, `call ${i} failed after ${Math.round(o.ms)} ms: ${o.error}`);
    assert.ok(o.ms < CALL_TIMEOUT_MS, `call ${i} took ${Math.round(o.ms)} ms`);
  }
  assert.deepEqual(outcomes.slice(2, 4).map((o) => o.value), [true, true]);
  // Both Releases reached the replica that is up, each with its lease's token.
  const released = up.seen.release.slice(releasesBefore).map((r) => r.request.resource);
  assert.deepEqual([...new Set(released)].sort(), ['orders/0', 'orders/1']);
});

test('an acquire sent to the silent replica is retried on the other one', async (t) => {
  const { up, proxy, client } = await setup(t);
  proxy.blackhole();
  for (let i = 0; i < 2; i++) {
    const { value: lease, error, ms } = await timed(client.acquire(`jobs/${i}`, { ttlMs: 10_000 }));
    assert.equal(error, undefined, `acquire ${i} failed after ${Math.round(ms)} ms: ${error}`);
    assert.ok(lease.valid);
    assert.equal(up.seen.acquire.filter((a) => a.request.resource === `jobs/${i}`).length, 1);
    // An Acquire's attempt has the whole call timeout (rule 2); the retry goes to the other replica.
    assert.ok(ms < 2 * CALL_TIMEOUT_MS, `acquire ${i} took ${Math.round(ms)} ms`);
  }
});
