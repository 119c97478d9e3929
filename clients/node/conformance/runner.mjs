#!/usr/bin/env node
// The Node client's conformance runner: performs one scenario of
// clients/conformance/README.md with redlockd-client and prints what it saw, one JSON object
// a line. The harness decides whether that is right.
//
//   node clients/node/conformance/runner.mjs --server HOST:PORT[,HOST:PORT...] --scenario NAME --resource R
//
// Every replica --server names goes to each client (rule 16). While a scenario holds a lease or
// a leadership, a timer reports what the client believes of it every 20 ms (the belief oracle's
// input), and stops before the runner releases or resigns it.
//
// Exit status 0 after the result line; 1 on any unexpected failure (printed to stderr).
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LockClient, LockServiceError } from '../dist/index.js';
import { describeHeld } from '../dist/testing.js';

const { values: args } = parseArgs({
  options: {
    server: { type: 'string' },
    scenario: { type: 'string' },
    resource: { type: 'string' },
    count: { type: 'string' },
    elections: { type: 'string' },
    'ttl-ms': { type: 'string' },
  },
});
if (!args.server || !args.scenario || args.resource === undefined) {
  console.error('usage: runner.mjs --server HOST:PORT[,HOST:PORT...] --scenario NAME --resource R');
  process.exit(2);
}
const { resource } = args;
const servers = args.server.split(',').map((a) => a.trim()).filter((a) => a !== '');
const clients = [];

/** A client with the defaults and every replica, on its own channel (no subchannel shared with another client). */
function client(opts = {}) {
  const c = new LockClient({ address: servers, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } }, opts);
  clients.push(c);
  return c;
}

/** One JSON line, written at once (stdout is synchronous for pipes and files on POSIX). */
function emit(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

// The belief oracle's input: every 20 ms, for each handle being reported, its public validity
// and remaining time now. A handle is reported from when it exists until `stop` (which prints
// belief-end), called before it is released or resigned.
const beliefs = new Map();
let beliefTimer;

function reportBelief(handle, read) {
  // CLOCK_MONOTONIC before and after the remaining time: the client read its clock between.
  const beforeNs = process.hrtime.bigint().toString();
  const { valid, remaining } = read();
  const monoNs = process.hrtime.bigint().toString();
  emit({ event: 'belief', handle, valid, remaining_ms: valid ? remaining : 0, mono_ns: monoNs, mono_before_ns: beforeNs });
}

/** Starts reporting `handle` ('lease' or 'leadership'): `read()` gives { valid, remaining }. */
function believe(handle, read) {
  beliefs.set(handle, read);
  reportBelief(handle, read);
  if (beliefTimer === undefined) {
    beliefTimer = setInterval(() => {
      for (const [name, reader] of beliefs) reportBelief(name, reader);
    }, 20);
  }
}

function believeLease(lease) {
  believe('lease', () => ({ valid: lease.valid, remaining: lease.remainingMs }));
}

function believeLeadership(leadership) {
  believe('leadership', () => ({ valid: leadership.isLeader, remaining: leadership.remainingMs }));
}

/** Stops reporting `handle` and prints its belief-end (once; nothing when it was not reported). */
function stopBelief(handle) {
  if (!beliefs.delete(handle)) return;
  if (beliefs.size === 0 && beliefTimer !== undefined) {
    clearInterval(beliefTimer);
    beliefTimer = undefined;
  }
  emit({ event: 'belief-end', handle, mono_ns: process.hrtime.bigint().toString() });
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

/** A leader as the result facts show it: null for none, else [value, "term"] (the bigint term in decimal). */
function leaderFact(leader) {
  return leader === null ? null : [leader.value, leader.term.toString()];
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

/** How `promise` settled: { ok: true, value } or { ok: false, error }. */
function outcomeOf(promise) {
  return promise.then((value) => ({ ok: true, value }), (error) => ({ ok: false, error }));
}

/** `promise`'s value, or undefined when it takes longer than `ms` (nothing thrown). */
async function atMost(ms, promise) {
  const timeout = new AbortController();
  try {
    return await Promise.race([promise, sleep(ms, undefined, { signal: timeout.signal }).then(() => undefined)]);
  } finally {
    timeout.abort();
  }
}

/** Resolves when `signal` aborts (at once if it has). */
function aborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Polls `condition` every 10 ms for up to `ms`. */
async function until(condition, ms) {
  const end = performance.now() + ms;
  while (!condition() && performance.now() < end) await sleep(10);
}

/** What `promise` resolved with, or the client's error it rejected with (any other rejects). */
async function noted(promise) {
  try {
    return await promise;
  } catch (e) {
    if (e instanceof LockServiceError) return describe(e);
    throw e;
  }
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
    believeLease(lease);
    await awaitPoint('held');
    const b = client();
    const tried = await b.tryAcquire(resource, { ttlMs: 10_000 });
    const competitor = await errorOf(b.acquire(resource, { ttlMs: 10_000, waitMs: 300 }));
    const facts = {
      fencing_token: lease.fencingToken.toString(),
      valid: lease.valid,
      remaining_ms: lease.remainingMs,
      lease_string: String(lease),
      try_acquire: tried === null ? 'none' : 'lease',
      competitor_error: competitor,
    };
    stopBelief('lease');
    facts.released = await lease.release();
    return facts;
  },

  async 'release-twice'() {
    const lease = await client().acquire(resource, { ttlMs: 10_000, waitMs: 0 });
    believeLease(lease);
    await awaitPoint('held');
    stopBelief('lease');
    const first = await lease.release();
    const second = await lease.release();
    return { first_release: first, second_release: second, valid_after: lease.valid };
  },

  async extend() {
    const lease = await client().acquire(resource, { ttlMs: 2000, waitMs: 0 });
    believeLease(lease);
    await sleep(500);
    await lease.extend(3000);
    const remaining = lease.remainingMs;
    await awaitPoint('extended');
    await sleep(2000);
    const facts = { remaining_after_extend_ms: remaining, valid_after_first_ttl: lease.valid };
    stopBelief('lease');
    facts.released = await lease.release();
    return facts;
  },

  async 'keep-alive'() {
    const lease = await client().acquire(resource, { ttlMs: 1000, waitMs: 0 });
    believeLease(lease);
    let lost = 0;
    lease.keepAlive().onLost(() => { lost += 1; });
    await sleep(1500);
    await awaitPoint('kept');
    await sleep(1500);
    const facts = { valid_at_end: lease.valid, lost: lost > 0 };
    stopBelief('lease');
    facts.released = await lease.release();
    return facts;
  },

  async 'majority-frozen'() {
    const lease = await client().acquire(resource, { ttlMs: 2000, waitMs: 0 });
    believeLease(lease);
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
    stopBelief('lease');
    return facts;
  },

  async 'lost-answer'() {
    const impatient = client({ callTimeoutMs: 300 });
    await awaitPoint('pause');
    const start = performance.now();
    const lease = await impatient.acquire(resource, { ttlMs: 10_000, waitMs: 0 });
    const elapsed = performance.now() - start;
    const facts = { acquired: lease.valid, elapsed_ms: elapsed };
    believeLease(lease);
    await awaitPoint('held');
    stopBelief('lease');
    try {
      facts.released = await lease.release();
    } catch (e) { // no answer within 300 ms: reported, the harness judges it
      if (!(e instanceof LockServiceError)) throw e;
      facts.release_error = describe(e);
    }
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
    believeLeadership(leaderA);
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
    stopBelief('leadership');
    const resignStart = performance.now();
    const resigned = await leaderA.resign();
    const leaderB = await within(10_000, bCampaign, "B's campaign");
    const facts = {
      term_a: leaderA.term.toString(),
      c_error: cError,
      b_led_early: bLedEarly,
      leader_after_proclaim: leaderAfterProclaim,
      resigned,
      handover_ms: bReturnedAt - resignStart,
      a_leader_after_resign: leaderA.isLeader,
      a_lost: aLost > 0,
      term_b: leaderB.term.toString(),
      b_value: leaderB.value,
      b_is_leader: leaderB.isLeader,
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
    believeLeadership(leaderA);
    await sleep(300);
    stopBelief('leadership');
    await leaderA.resign();
    await sleep(300);
    const leaderB = await second.campaign(resource, 'b', { ttlMs: 2000 });
    await sleep(300);
    await leaderB.resign();
    await until(() => events.length >= 5 && events[events.length - 1] === null, 5000);
    observation.close();
    closed = true;
    await sleep(300);
    return { events, term_a: leaderA.term.toString(), term_b: leaderB.term.toString(), late_events: late };
  },

  async 'extend-while-kept'() {
    const lease = await client().acquire(resource, { ttlMs: 2000, waitMs: 0 });
    believeLease(lease);
    let lostCalls = 0;
    let onFirst;
    const lostOnce = new Promise((resolve) => { onFirst = resolve; });
    lease.keepAlive().onLost(() => {
      lostCalls += 1;
      onFirst();
    });
    await awaitPoint('kept');
    await lease.extend(6000); // through the stream (rule 15)
    await awaitPoint('longer');
    const validAfterLonger = lease.valid;
    await sleep(500);
    await lease.extend(1000);
    const remainingAfterShorter = lease.remainingMs;
    await awaitPoint('shorter');
    const timeout = new AbortController();
    await Promise.race([lostOnce, sleep(3000, undefined, { signal: timeout.signal }).catch(() => {})]);
    timeout.abort();
    const facts = {
      fencing_token: lease.fencingToken.toString(),
      valid_after_longer: validAfterLonger,
      remaining_after_shorter_ms: remainingAfterShorter,
      lost_calls: lostCalls,
      valid_at_end: lease.valid,
    };
    stopBelief('lease');
    facts.released = await lease.release();
    return facts;
  },

  async 'replica-restart'() {
    const c = client();
    const lease = await c.acquire(resource, { ttlMs: 3000, waitMs: 0 });
    believeLease(lease);
    let leaseLost = 0;
    lease.keepAlive().onLost(() => { leaseLost += 1; });
    const leadership = await c.campaign(resource, 'a', { ttlMs: 3000 });
    believeLeadership(leadership);
    let leadershipLost = 0;
    leadership.onLost(() => { leadershipLost += 1; });
    const fencingToken = lease.fencingToken.toString();
    const term = leadership.term;
    await awaitPoint('kept');
    const facts = {
      fencing_token: fencingToken,
      fencing_token_after: lease.fencingToken.toString(),
      term: term.toString(),
      term_after: leadership.term.toString(),
      valid: lease.valid,
      is_leader: leadership.isLeader,
      lease_lost_calls: leaseLost,
      leadership_lost_calls: leadershipLost,
    };
    stopBelief('lease');
    stopBelief('leadership');
    facts.released = await lease.release();
    facts.resigned = await leadership.resign();
    return facts;
  },

  // Issue 40's faults are the harness's; the runner does what it does for replica-restart.
  async 'replica-silent'() {
    return scenarios['replica-restart']();
  },
  async 'replica-blackhole'() {
    return scenarios['replica-restart']();
  },
  async 'replica-minority'() {
    return scenarios['replica-restart']();
  },
  async 'rolling-restart-fast'() {
    return scenarios['replica-restart']();
  },

  // Unary calls right after a replica got SIGTERM: each must reach a replica that is up within
  // its own deadline (they retry UNAVAILABLE until then). The client has no Describe of its own:
  // it goes through the client's path for idempotent unary calls (describeHeld).
  async 'release-during-restart'() {
    const c = client();
    const [extends_, describes, releases] = [[], [], []];
    for (let round = 0; round < 3; round++) {
      const lease = await c.acquire(resource, { ttlMs: 10_000, waitMs: 0 });
      await awaitPoint('held'); // the harness sends SIGTERM to a replica, and answers at once
      extends_.push(await noted(lease.extend(10_000).then(() => 'ok')));
      describes.push(await noted(describeHeld(c, resource)));
      releases.push(await noted(lease.release()));
    }
    return { extends: extends_, describes, releases };
  },

  // Run while leader: A's work is told the moment its leadership is lost (a majority frozen),
  // before the deadline; B's work starts only after, in a later term, and B resigns at its end.
  async lead() {
    const [a, b] = [client(), client()];
    const workA = {};
    const aLead = outcomeOf(a.lead(resource, 'a', { ttlMs: 2000 }, async (leadership, signal) => {
      workA.startedAt = performance.now();
      workA.term = leadership.term;
      believeLeadership(leadership);
      await aborted(signal);
      workA.cancelledAt = performance.now();
      workA.deadline = leadership.deadline;
      stopBelief('leadership');
    }));
    await until(() => workA.startedAt !== undefined, 10_000);
    if (workA.startedAt === undefined) throw new Error("A's work did not start within 10 s");
    await awaitPoint('leading');
    const workB = {};
    const bLead = outcomeOf(b.lead(resource, 'b', { ttlMs: 2000 }, async (leadership) => {
      workB.startedAt = performance.now();
      workB.term = leadership.term;
    }));
    await sleep(300);
    const bEarly = workB.startedAt !== undefined;
    await awaitPoint('freeze');
    const aOutcome = await atMost(10_000, aLead);
    await awaitPoint('thaw');
    const bOutcome = await atMost(10_000, bLead);
    const facts = { term_a: workA.term.toString(), b_early: bEarly };
    if (workA.cancelledAt !== undefined) facts.cancel_margin_ms = workA.deadline - workA.cancelledAt;
    if (aOutcome !== undefined) facts.a_error = aOutcome.ok ? null : describe(aOutcome.error);
    if (workB.startedAt !== undefined) {
      facts.term_b = workB.term.toString();
      if (workA.cancelledAt !== undefined) facts.b_after_a_ms = workB.startedAt - workA.cancelledAt;
    }
    facts.b_result = bOutcome === undefined ? 'still running' : bOutcome.ok ? 'ok' : describe(bOutcome.error);
    return facts;
  },

  // The rolling-restart run's load: many kept leases and leaderships on one client, no beliefs.
  async 'hold-many'() {
    const count = Number(args.count ?? '0');
    const electionCount = Number(args.elections ?? '0');
    const ttlMs = Number(args['ttl-ms'] ?? '10000');
    const c = client();
    const leases = [];
    let leasesLost = 0;
    // Each loss with when it came (ms after the "held" await point, negative before it) and why.
    let heldAt = performance.now();
    const losses = [];
    const record = (kind) => (error) => {
      const at = Math.round(performance.now() - heldAt);
      losses.push(`${kind} ${at < 0 ? '' : '+'}${at} ms ${error?.codeName ?? ''}: ${String(error?.details ?? error?.message ?? error).slice(0, 160)}`);
    };
    for (let i = 0; i < count; i += 1) {
      const lease = await c.acquire(`${resource}/${i}`, { ttlMs, waitMs: 10_000 });
      lease.keepAlive().onLost(() => { leasesLost += 1; }).onLost(record(`lease ${i}`));
      leases.push({ lease, fence: lease.fencingToken });
    }
    let leadershipsLost = 0;
    const leaderships = await Promise.all(Array.from({ length: electionCount }, async (_, i) => {
      const leadership = await c.campaign(`${resource}/e${i}`, 'node', { ttlMs });
      leadership.onLost(() => { leadershipsLost += 1; });
      leadership.onLost(record(`leadership ${i}`));
      return { leadership, term: leadership.term };
    }));
    heldAt = performance.now();
    await awaitPoint('held');
    const facts = {
      leases: leases.length,
      leases_valid: leases.filter((l) => l.lease.valid).length,
      leases_lost: leasesLost,
      fencing_changed: leases.filter((l) => l.lease.fencingToken !== l.fence).length,
      leaderships: leaderships.length,
      leading: leaderships.filter((l) => l.leadership.isLeader).length,
      leaderships_lost: leadershipsLost,
      terms_changed: leaderships.filter((l) => l.leadership.term !== l.term).length,
      losses: [...losses],
    };
    facts.released = (await Promise.all(leases.map((l) => l.lease.release()))).filter(Boolean).length;
    facts.resigned = (await Promise.all(leaderships.map((l) => l.leadership.resign()))).filter(Boolean).length;
    return facts;
  },

  async permits() {
    // N + 3 workers, each with its own client over every replica, take one of N permits in turn
    // for 4 s; each hold is a `permit` event for the harness to check that no more than N overlap.
    const permits = 3;
    const workers = Array.from({ length: permits + 3 }, () => client());
    const acquired = [];
    const errors = [];
    const until = performance.now() + 4000;
    const worker = async (i, mine) => {
      while (performance.now() < until) {
        try {
          const lease = await mine.acquirePermit(resource, permits, { ttlMs: 2000, waitMs: 3000 });
          const startNs = process.hrtime.bigint(); // after the grant
          lease.keepAlive();
          await sleep(50 + Math.random() * 100);
          const endNs = process.hrtime.bigint(); // before the release
          emit({ event: 'permit', worker: i, permit: lease.permit, fencing_token: lease.fencingToken.toString(),
            start_ns: startNs.toString(), end_ns: endNs.toString() });
          acquired.push(lease.permit);
          if (!await lease.release()) {
            errors.push({ type: 'NotReleased', code: 'OK', message: `permit ${lease.permit}` });
          }
        } catch (e) {
          // Noted; the worker goes on.
          errors.push(e instanceof LockServiceError ? describe(e)
            : { type: e?.name ?? 'Error', code: 'UNKNOWN', message: String(e) });
          await sleep(50); // not a hot loop of failures
        }
      }
    };
    await Promise.all(workers.map((mine, i) => worker(i, mine)));
    return { acquired: acquired.length, permits_seen: [...new Set(acquired)].sort((x, y) => x - y), errors };
  },

  async 'shutdown-race'() {
    const lease = await client().acquire(resource, { ttlMs: 2000, waitMs: 0 });
    believeLease(lease);
    let lost = 0;
    lease.keepAlive().onLost(() => { lost += 1; });
    const fencingToken = lease.fencingToken.toString();
    await awaitPoint('held');
    const facts = {
      fencing_token: fencingToken,
      fencing_token_after: lease.fencingToken.toString(),
      valid: lease.valid,
      lost_calls: lost,
    };
    stopBelief('lease');
    facts.released = await lease.release();
    return facts;
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
  if (beliefTimer !== undefined) clearInterval(beliefTimer);
  for (const c of clients) c.close();
  stdin.close();
}
// Nothing left to wait for (a fire-and-forget Release, a stream being torn down) may hold the
// exit up; stdout is written synchronously to pipes and files.
process.exit(exitCode);
