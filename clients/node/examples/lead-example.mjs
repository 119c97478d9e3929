#!/usr/bin/env node
// Run while leader from Node.js with redlockd-client: follow an election as an async iterable,
// lead with lead() (the work's signal aborts the moment the leadership is lost; it resigns when
// the work returns), and give a call a signal of its own.
//
//   node lead-example.mjs [--server HOST:PORT[,HOST:PORT...]]   (default 127.0.0.1:50051; several replicas: a comma list)
//
// Exit status 0 on success, 1 on any failure.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LockClient } from '../dist/index.js'; // in your project: from 'redlockd-client'

const { values } = parseArgs({ options: { server: { type: 'string', default: '127.0.0.1:50051' } } });
const server = values.server;

async function main() {
  const client = new LockClient(server); // host:port of redlockd
  const shutdown = new AbortController(); // aborting it stops everything below
  // --- observe example begins ---
  // The current leader (or null), then every change, until the signal aborts (or the loop breaks).
  const watching = (async () => {
    for await (const leader of client.observe('examples/jobs', { signal: shutdown.signal })) {
      console.log(leader === null ? 'observed: no leader' : `observed: ${leader.value} leads in term ${leader.term}`);
    }
  })();
  // --- observe example ends ---
  try {
    // --- lead example begins ---
    // Campaigns (as long as it takes), runs the work while leading, resigns when it returns.
    // `signal` aborts the moment the leadership is lost (or shutdown aborts): stop writing then.
    const batches = await client.lead('examples/jobs', '10.0.0.7:8080', { ttlMs: 5_000, signal: shutdown.signal },
      async (leadership, signal) => {
        console.log(`leading in term ${leadership.term}`); // a bigint: pass it with every write
        for (let batch = 1; batch <= 3; batch++) {
          await sleep(300, undefined, { signal }); // the work, cut short if the leadership is lost
          console.log(`batch ${batch} written in term ${leadership.term}`);
        }
        return 3;
      });
    console.log(`resigned after ${batches} batches`);
    // --- lead example ends ---
    // --- signal example begins ---
    // Every call takes a signal: this one gives up after 2 s (a CANCELLED LockServiceError).
    const leader = await client.leader('examples/jobs', { signal: AbortSignal.timeout(2_000) });
    console.log(leader === null ? 'leader now: none' : `leader now: ${leader.value} in term ${leader.term}`);
    // --- signal example ends ---
    await sleep(200); // lets the observer see the election without a leader
  } finally {
    shutdown.abort(); // ends the observer's loop
    await watching;
    client.close();
  }
}

main().catch((err) => {
  console.error(`failed: ${err.message}`);
  process.exitCode = 1;
});
