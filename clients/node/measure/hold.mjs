#!/usr/bin/env node
// Holds one kept lease for clients/python/measure/silent_replica.py and says, one JSON line
// each, when its deadline moved and when it was lost (as clients/python/measure/hold.py does).
//
//   node clients/node/measure/hold.mjs --server HOST:PORT,HOST:PORT --resource R --ttl SECONDS
//
// mono_ns is CLOCK_MONOTONIC (process.hrtime.bigint()), read when the move was seen (polled
// every 5 ms). A line "release" on standard input releases the lease.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { LockClient } from '../dist/index.js';

const { values: args } = parseArgs({
  options: { server: { type: 'string' }, resource: { type: 'string' }, ttl: { type: 'string', default: '5' } },
});
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const mono = () => process.hrtime.bigint().toString();

const client = new LockClient({ address: args.server.split(','), channelOptions: { 'grpc.use_local_subchannel_pool': 1 } });
const lease = await client.acquire(args.resource, { ttlMs: Number(args.ttl) * 1000 });
lease.keepAlive().onLost((e) => emit({ event: 'lost', mono_ns: mono(), error: String(e) }));
emit({ event: 'held' });
let deadline = lease.deadline;
const poll = setInterval(() => {
  if (lease.deadline > deadline) {
    deadline = lease.deadline;
    emit({ event: 'renewed', mono_ns: mono() });
  }
}, 5);
const input = createInterface({ input: process.stdin });
for await (const _line of input) {
  break;
}
clearInterval(poll);
emit({ event: 'released', released: await lease.release() });
client.close();
process.exit(0);
