#!/usr/bin/env node
// The Node client's conformance runner: performs one scenario of
// clients/conformance/README.md with redlockd-client and prints what it saw, one JSON object
// a line. The harness decides whether that is right.
//
//   node clients/node/conformance/runner.mjs --server HOST:PORT --scenario NAME --resource R
//
// Exit status 0 after the result line; 1 on any unexpected failure (printed to stderr).
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LockClient, LockServiceError } from '../dist/index.js';

const { values: args } = parseArgs({
  options: {
    server: { type: 'string' },
    scenario: { type: 'string' },
    resource: { type: 'string' },
  },
});
if (!args.server || !args.scenario || args.resource === undefined) {
  console.error('usage: runner.mjs --server HOST:PORT --scenario NAME --resource R');
  process.exit(2);
}
const { server, resource } = args;
const clients = [];

/** A client with the defaults, on its own channel (no subchannel shared with another client). */
function client(opts = {}) {
  const c = new LockClient({ address: server, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } }, opts);
  clients.push(c);
  return c;
}

function emit(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

// Standard input, a line at a time: the harness answers each await with one line. Lines that
// come early are kept for the next awaits, and reading pauses meanwhile (so that input piped
// from `yes ''` does not keep the event loop busy while a scenario runs).
const lines = [];
const waiting = [];
let stdinClosed = false;
const stdin = createInterface({ input: process.stdin });
stdin.on('line', (line) => {
  if (waiting.length > 0) {
    waiting.shift().resolve(line);
  } else {
    lines.push(line);
    stdin.pause();
  }
});
stdin.on('close', () => {
  stdinClosed = true;
  while (waiting.length > 0) waiting.shift().reject(new Error('the harness closed standard input'));
});

/** Tells the harness this point is reached and waits for its answer line. */
async function awaitPoint(name) {
  emit({ event: 'await', name });
  if (lines.length > 0) {
    lines.shift();
    if (lines.length === 0) stdin.resume();
    return;
  }
  if (stdinClosed) throw new Error(`the harness closed standard input at ${name}`);
  await new Promise((resolve, reject) => waiting.push({ resolve, reject }));
}

function describe(e) {
  return { type: e.name, code: e.codeName, message: String(e) };
}

/** A leader as the result facts show it: null for none, else [value, "term"]. */
function leaderFact(leader) {
  return leader === null ? null : [leader.value, leader.term];
}

/** Resolves with `promise`'s value, or rejects when it takes longer than `ms`. */
async function within(ms, promise, what) {
  const timeout = new AbortController();
  try {
    return await Promise.race([promise, sleep(ms, undefined, { signal: timeout.signal }).then(() => {
      throw new Error(`${what} took longer than ${ms} ms`);
    })]);
  } finally {
    timeout.abort();
  }
}

/** Polls `condition` every 10 ms for up to `ms`. */
async function until(condition, ms) {
  const end = performance.now() + ms;
  while (!condition() && performance.now() < end) await sleep(10);
}

/** The error a call failed with; failing itself when the call succeeds or fails otherwise. */
async function errorOf(promise) {
  try {
    await promise;
  } catch (e) {
    if (e instanceof LockServiceError) return describe(e);
    throw e;
  }
  throw new Error('the call succeeded');
}

const scenarios = {
  async 'acquire-contended'() {
    const lease = await client().acquire(resource, { ttlMs: 10_000, waitMs: 0 });
    await awaitPoint('held');
    const b = client();
    const tried = await b.tryAcquire(resource, { ttlMs: 10_000 });
    const competitor = await errorOf(b.acquire(resource, { ttlMs: 10_000, waitMs: 300 }));
    return {
      fencing_token: lease.fencingToken.toString(),
      valid: lease.valid,
      remaining_ms: lease.remainingMs,
      lease_string: String(lease),
      try_acquire: tried === null ? 'none' : 'lease',
      competitor_error: competitor,
      released: await lease.release(),
    };
  },

  async 'release-twice'() {
    const lease = await client().acquire(resource, { ttlMs: 10_000, waitMs: 0 });
    await awaitPoint('held');
    const first = await lease.release();
    const second = await lease.release();
    return { first_release: first, second_release: second, valid_after: lease.valid };
  },

  async extend() {
    const lease = await client().acquire(resource, { ttlMs: 2000, waitMs: 0 });
    await sleep(500);
    await lease.extend(3000);
    const remaining = lease.remainingMs;
    await awaitPoint('extended');
    await sleep(2000);
    return {
      remaining_after_extend_ms: remaining,
      valid_after_first_ttl: lease.valid,
      released: await lease.release(),
    };
  },

  async 'keep-alive'() {
    const lease = await client().acquire(resource, { ttlMs: 1000, waitMs: 0 });
    let lost = 0;
    lease.keepAlive().onLost(() => { lost += 1; });
    await sleep(1500);
    await awaitPoint('kept');
    await sleep(1500);
    return { valid_at_end: lease.valid, lost: lost > 0, released: await lease.release() };
  },

  async 'majority-frozen'() {
    const lease = await client().acquire(resource, { ttlMs: 2000, waitMs: 0 });
    let calls = 0;
    let first;
    let onFirst;
    const lostOnce = new Promise((resolve) => { onFirst = resolve; });
    lease.keepAlive().onLost((error) => {
      const at = performance.now();
      calls += 1;
      if (calls === 1) {
        first = { at, deadline: lease.deadline, error };
        onFirst();
      }
    });
    await sleep(300);
    await awaitPoint('freeze');
    const frozen = performance.now();
    const timeout = new AbortController();
    await Promise.race([lostOnce, sleep(10_000, undefined, { signal: timeout.signal }).catch(() => {})]);
    timeout.abort();
    await sleep(500);
    const facts = { lost_calls: calls };
    if (first !== undefined) {
      facts.margin_ms = first.deadline - first.at;
      facts.waited_ms = first.at - frozen;
      facts.lost_error = describe(first.error);
    }
    facts.valid_after_lost = lease.valid;
    return facts;
  },

  async 'lost-answer'() {
    const impatient = client({ callTimeoutMs: 300 });
    await awaitPoint('pause');
    const start = performance.now();
    const lease = await impatient.acquire(resource, { ttlMs: 10_000, waitMs: 0 });
    const elapsed = performance.now() - start;
    const facts = { acquired: lease.valid, elapsed_ms: elapsed };
    await awaitPoint('held');
    facts.released = await lease.release();
    return facts;
  },

  async 'invalid-argument'() {
    const c = client();
    return {
      empty_resource: await errorOf(c.acquire('', { ttlMs: 10_000, waitMs: 0 })),
      zero_ttl: await errorOf(c.acquire(resource, { ttlMs: 0, waitMs: 0 })),
      long_resource: await errorOf(c.acquire(resource + 'x'.repeat(600), { ttlMs: 10_000, waitMs: 0 })),
    };
  },

  async 'concurrent-holders'() {
    const shared = [client(), client()];
    const sections = [];
    const worker = async (mine) => {
      for (let i = 0; i < 5; i++) {
        await mine.withLock(resource, { ttlMs: 2000, waitMs: 20_000 }, async (lease) => {
          const start = performance.now();
          await sleep(5);
          const end = performance.now();
          sections.push([start, end, lease.fencingToken.toString()]);
        });
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => worker(shared[w % 2])));
    return { sections };
  },

  async 'campaign-handover'() {
    const [a, b, c] = [client(), client(), client()];
    const leaderA = await a.campaign(resource, 'a', { ttlMs: 2000 });
    let aLost = 0;
    leaderA.onLost(() => { aLost += 1; });
    await awaitPoint('leading');
    const cError = await errorOf(c.campaign(resource, 'c', { ttlMs: 2000, waitMs: 300 }));
    let bReturnedAt;
    const bCampaign = b.campaign(resource, 'b', { ttlMs: 2000 }).then((leadership) => {
      bReturnedAt = performance.now();
      return leadership;
    });
    bCampaign.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
    await sleep(1500); // A leads only by its renewals by now
    const bLedEarly = bReturnedAt !== undefined;
    await leaderA.proclaim('a2');
    const leaderAfterProclaim = leaderFact(await a.leader(resource));
    const resignStart = performance.now();
    const resigned = await leaderA.resign();
    const leaderB = await within(10_000, bCampaign, "B's campaign");
    const facts = {
      term_a: leaderA.term,
      c_error: cError,
      b_led_early: bLedEarly,
      leader_after_proclaim: leaderAfterProclaim,
      resigned,
      handover_ms: bReturnedAt - resignStart,
      a_leader_after_resign: leaderA.isLeader(),
      a_lost: aLost > 0,
      term_b: leaderB.term,
      b_value: leaderB.value,
      b_is_leader: leaderB.isLeader(),
    };
    facts.b_resigned = await leaderB.resign();
    facts.second_resign = await leaderB.resign();
    facts.leader_at_end = leaderFact(await a.leader(resource));
    return facts;
  },

  async observe() {
    const [first, second] = [client(), client()];
    const events = [];
    let closed = false;
    let late = 0;
    const observation = first.observe(resource, (leader) => {
      if (closed) late += 1;
      events.push(leaderFact(leader));
    });
    await until(() => events.length >= 1, 5000);
    const leaderA = await first.campaign(resource, 'a', { ttlMs: 2000 });
    await sleep(300);
    await leaderA.resign();
    await sleep(300);
    const leaderB = await second.campaign(resource, 'b', { ttlMs: 2000 });
    await sleep(300);
    await leaderB.resign();
    await until(() => events.length >= 5, 5000);
    observation.close();
    closed = true;
    await sleep(300);
    return { events, term_a: leaderA.term, term_b: leaderB.term, late_events: late };
  },
};

const run = scenarios[args.scenario];
if (run === undefined) {
  console.error(`unknown scenario ${args.scenario}`);
  process.exit(2);
}
let exitCode = 0;
try {
  const facts = await run();
  emit({ event: 'result', scenario: args.scenario, ...facts });
} catch (e) {
  console.error(`runner failed: ${e instanceof Error ? e.stack : String(e)}`);
  exitCode = 1;
} finally {
  for (const c of clients) c.close();
  stdin.close();
}
// Nothing left to wait for (a fire-and-forget Release, a stream being torn down) may hold the
// exit up; stdout is written synchronously to pipes and files.
process.exit(exitCode);
