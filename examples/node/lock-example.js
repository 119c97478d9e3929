#!/usr/bin/env node
// redlockd from Node.js: acquire a lock, keep it alive on a KeepAlive stream, release it.
//
// The contract is loaded at run time from proto/src/main/proto, so it always matches the
// server. Prints the lease's fencing token, never its token: the token is the proof of
// ownership, whoever has it can release the lock.
//
// Exit status 0 when every step went as the contract says, 1 on any failure.
'use strict';

const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const USAGE = `usage: node lock-example.js [--server host:port] [--resource NAME] [--ttl-seconds S]
       [--wait-seconds S] [--hold-seconds S] [--renewals N] [--proto-dir DIR]
  --server        host:port of redlockd (env REDLOCKD_SERVER, default 127.0.0.1:50051)
  --resource      lock name (default examples/node)
  --ttl-seconds   lease ttl; the server renews every ttl/3 (default 3)
  --wait-seconds  how long Acquire waits while someone else holds the lock (default 0)
  --hold-seconds  keep the lease at least this long before releasing it (default 0)
  --renewals      release after at least this many HELD renewals (default 2)
  --proto-dir     where redlock/v1/lock.proto lives (default: this repository's)`;

function options() {
  const { values } = parseArgs({
    options: {
      server: { type: 'string', default: process.env.REDLOCKD_SERVER || '127.0.0.1:50051' },
      resource: { type: 'string', default: 'examples/node' },
      'ttl-seconds': { type: 'string', default: '3' },
      'wait-seconds': { type: 'string', default: '0' },
      'hold-seconds': { type: 'string', default: '0' },
      renewals: { type: 'string', default: '2' },
      'proto-dir': { type: 'string', default: path.join(__dirname, '..', '..', 'proto', 'src', 'main', 'proto') },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const number = (name) => {
    const n = Number(values[name]);
    if (!Number.isFinite(n) || n < 0) {
      throw new Error(`--${name} must be a non-negative number, not '${values[name]}'`);
    }
    return n;
  };
  return {
    help: values.help,
    server: values.server,
    resource: values.resource,
    ttlSeconds: number('ttl-seconds'),
    waitSeconds: number('wait-seconds'),
    holdSeconds: number('hold-seconds'),
    renewals: number('renewals'),
    protoDir: values['proto-dir'],
  };
}

function loadService(protoDir) {
  const definition = protoLoader.loadSync('redlock/v1/lock.proto', {
    includeDirs: [protoDir],
    keepCase: true, // field names as in the proto: fencing_token
    // Fencing tokens are uint64: as strings they keep every digit.
    longs: String,
    enums: String,
    defaults: true,
  });
  return grpc.loadPackageDefinition(definition).redlock.v1.LockService;
}

function duration(seconds) {
  const whole = Math.floor(seconds);
  return { seconds: String(whole), nanos: Math.round((seconds - whole) * 1e9) };
}

function seconds(d) {
  return (Number(d.seconds) + d.nanos / 1e9).toFixed(3);
}

function acquire(client, opts) {
  const request = {
    resource: opts.resource,
    ttl: duration(opts.ttlSeconds),
    wait: duration(opts.waitSeconds),
    owner: `node example pid ${process.pid}`,
  };
  const deadline = new Date(Date.now() + (opts.waitSeconds + 10) * 1000);
  return new Promise((resolve, reject) => {
    client.Acquire(request, { deadline }, (err, response) => (err ? reject(err) : resolve(response.lease)));
  });
}

// Keeps the lease alive on a KeepAlive stream; half-closes it once held long enough, and
// resolves with the number of HELD renewals when the server ends the stream OK.
function keepAndRelease(client, opts, lease) {
  const limitSeconds = opts.holdSeconds + (opts.renewals + 2) * opts.ttlSeconds + 30;
  const call = client.KeepAlive({ deadline: new Date(Date.now() + limitSeconds * 1000) });
  const started = Date.now();
  let held = 0;
  let closing = false;
  return new Promise((resolve, reject) => {
    call.on('data', (response) => {
      if (response.state === 'LEASE_STATE_HELD') {
        held += 1;
      }
      console.log(`renewal: ${response.state}, fencing token ${response.lease.fencing_token}, `
        + `valid for ${seconds(response.lease.validity)}s`);
      if (!closing && held >= opts.renewals && Date.now() - started >= opts.holdSeconds * 1000) {
        closing = true;
        call.end(); // half-close: the server releases the lease and ends the stream OK
      }
    });
    call.on('error', reject);
    call.on('status', (status) => {
      if (status.code !== grpc.status.OK) {
        return; // 'error' reports it
      }
      if (closing) {
        resolve(held);
      } else {
        reject(new Error('the server ended the stream before the example released the lease'));
      }
    });
    call.write({ resource: lease.resource, token: lease.token, ttl: duration(opts.ttlSeconds), sequence: '1' });
  });
}

async function main() {
  const opts = options();
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const LockService = loadService(opts.protoDir);
  const client = new LockService(opts.server, grpc.credentials.createInsecure());
  try {
    const lease = await acquire(client, opts);
    console.log(`acquired ${lease.resource}: fencing token ${lease.fencing_token}, `
      + `valid for ${seconds(lease.validity)}s`);
    const held = await keepAndRelease(client, opts, lease);
    console.log(`released ${lease.resource}: the KeepAlive stream ended OK after ${held} HELD renewals`);
    return 0;
  } finally {
    client.close();
  }
}

main().then(
  (code) => { process.exitCode = code; },
  (err) => {
    // gRPC errors carry the status name; status messages never carry the token (the server's contract).
    const code = err.code !== undefined && grpc.status[err.code] ? `${grpc.status[err.code]}: ` : '';
    console.error(`failed: ${code}${err.details || err.message}`);
    process.exitCode = 1;
  },
);
