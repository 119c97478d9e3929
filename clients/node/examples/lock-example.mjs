#!/usr/bin/env node
// redlockd from Node.js with redlockd-client: acquire a lock, keep it alive while working,
// release it; then the same with withLock.
//
//   node lock-example.mjs [--server HOST:PORT[,HOST:PORT...]]   (default 127.0.0.1:50051; several replicas: a comma list)
//
// Prints fencing tokens, never a lease's token. Exit status 0 on success, 1 on any failure.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LockClient } from '../dist/index.js'; // in your project: from 'redlockd-client'

const { values } = parseArgs({ options: { server: { type: 'string', default: '127.0.0.1:50051' } } });
const server = values.server;

async function main() {
  // --- README example begins ---
  const client = new LockClient(server); // host:port of redlockd
  try {
    const lease = await client.acquire('examples/node', { ttlMs: 10_000, waitMs: 2_000 });
    console.log(`acquired ${lease.resource}: fencing token ${lease.fencingToken}`);
    lease.keepAlive().onLost((err) => console.error(`lost the lock: ${err.message}`));
    await sleep(2_000); // the work: pass lease.fencingToken with every write it protects
    if (!(await lease.release())) throw new Error('the lease was no longer held');
    console.log('released');
    // Or let withLock acquire, keep alive and release around the work:
    const token = await client.withLock('examples/node', { ttlMs: 10_000, waitMs: 2_000 }, async (held) => held.fencingToken);
    console.log(`withLock ran with fencing token ${token}`);
  } finally {
    client.close();
  }
  // --- README example ends ---
}

main().catch((err) => {
  console.error(`failed: ${err.message}`);
  process.exitCode = 1;
});
