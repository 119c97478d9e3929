#!/usr/bin/env node
// Leader election from Node.js with redlockd-client: observe an election, campaign in it,
// lead for a while (proclaiming a new value), resign.
//
//   node election-example.mjs [--server HOST:PORT[,HOST:PORT...]]   (default 127.0.0.1:50051; several replicas: a comma list)
//
// Exit status 0 on success, 1 on any failure.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LockClient } from '../dist/index.js'; // in your project: from 'redlockd-client'

const { values } = parseArgs({ options: { server: { type: 'string', default: '127.0.0.1:50051' } } });
const server = values.server;

async function main() {
  const client = new LockClient(server); // host:port of redlockd
  // Anyone may watch: the current leader (or null), then every change.
  const observation = client.observe('examples/scheduler', (leader) => {
    console.log(leader === null ? 'observed: no leader' : `observed: ${leader.value} leads in term ${leader.term}`);
  });
  try {
    // Waits up to 10 s to lead; renewed every ttl/4 from then on until resigned or lost.
    const leadership = await client.campaign('examples/scheduler', '10.0.0.7:8080', { ttlMs: 5_000, waitMs: 10_000 });
    console.log(`leading in term ${leadership.term}`); // a bigint, like a lease's fencing token
    leadership.onLost((err) => console.error(`no longer leading: ${err.message}`));
    await sleep(1_000); // the work: check leadership.isLeader, pass leadership.term with every write
    await leadership.proclaim('10.0.0.7:9090'); // same term, a new value for everyone
    const leader = await client.leader('examples/scheduler'); // { value, term } (term a bigint), or null
    console.log(`the leader as everyone sees it: ${JSON.stringify({ value: leader?.value, term: String(leader?.term) })}`);
    if (!(await leadership.resign())) throw new Error('the leadership was no longer held');
    console.log('resigned');
    await sleep(200); // lets the observer see the election without a leader
  } finally {
    observation.close();
    client.close();
  }
}

main().catch((err) => {
  console.error(`failed: ${err.message}`);
  process.exitCode = 1;
});
