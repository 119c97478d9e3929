// A fake LockService on localhost: each test scripts the answers and reads what arrived.
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { loadProto } from '../dist/internal.js';
import { ManualClock, onAnswerProcessed, useClock } from '../dist/testing.js';

export const { status } = grpc;

export function duration(ms) {
  return { seconds: String(Math.floor(ms / 1000)), nanos: Math.round((ms % 1000) * 1e6) };
}

export function millis(d) {
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

export function lease(resource, token, validityMs, fencingToken = '7') {
  return { resource, token, validity: duration(validityMs), fencingToken };
}

export function failure(code, details) {
  return Object.assign(new Error(details), { code, details });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 5 ms for up to `ms`; true when it held. */
export async function eventually(condition, ms = 2000) {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (condition()) return true;
    await sleep(5);
  }
  return condition();
}

/**
 * Starts a fake server. `handlers` may define acquire(call, callback, n), extend(call, callback),
 * release(call, callback, n) and keepAlive(stream, request, n) (called for each request of a
 * stream; `stream.ended` is set on half-close, after which `onEnd(stream)` runs: default OK;
 * `stream.cancelled` when the client cancels).
 *
 * ElectionService: campaign(stream, request, n) for each request of a Campaign stream (n counts
 * that stream's requests; `stream.index` is the stream's place in seen.campaignStreams), and
 * onCampaignEnd(stream) after a half-close (default: end OK); leader(call, callback, n);
 * observe(call, n) for the n-th Observe stream (`call.cancelled` is set when the client cancels).
 */
export async function startFake(handlers = {}) {
  const seen = {
    acquire: [], extend: [], release: [], keepAlive: [], streams: [],
    campaign: [], campaignStreams: [], leader: [], observe: [],
  };
  const pending = new Set();
  const server = new grpc.Server();
  server.addService(loadProto().redlock.v1.LockService.service, {
    Acquire(call, callback) {
      seen.acquire.push({ request: call.request, at: performance.now() });
      pending.add(call);
      const done = (err, value) => {
        pending.delete(call);
        callback(err, value);
      };
      (handlers.acquire ?? ((c, cb) => cb(null, { lease: lease(c.request.resource, c.request.token, 1000) })))(
        call, done, seen.acquire.length);
    },
    Extend(call, callback) {
      seen.extend.push({ request: call.request, at: performance.now() });
      (handlers.extend ?? ((c, cb) => cb(null, { lease: lease(c.request.resource, c.request.token, millis(c.request.ttl)) })))(
        call, callback);
    },
    Release(call, callback) {
      seen.release.push({ request: call.request, at: performance.now() });
      (handlers.release ?? ((c, cb) => cb(null, { released: true })))(call, callback, seen.release.length);
    },
    KeepAlive(stream) {
      seen.streams.push(stream);
      stream.requests = [];
      stream.on('data', (request) => {
        const entry = { request, at: performance.now() };
        seen.keepAlive.push(entry);
        stream.requests.push(entry);
        handlers.keepAlive?.(stream, request, stream.requests.length);
      });
      stream.on('end', () => {
        stream.ended = true;
        (handlers.onEnd ?? ((s) => s.end()))(stream);
      });
      stream.on('cancelled', () => { stream.cancelled = true; });
      stream.on('error', () => {});
    },
    Describe(call, callback) {
      callback(failure(status.UNIMPLEMENTED, 'not in the fake'));
    },
    ForceRelease(call, callback) {
      callback(failure(status.UNIMPLEMENTED, 'not in the fake'));
    },
  });
  server.addService(loadProto().redlock.v1.ElectionService.service, {
    Campaign(stream) {
      stream.index = seen.campaignStreams.length;
      seen.campaignStreams.push(stream);
      stream.requests = [];
      stream.on('data', (request) => {
        const entry = { request, at: performance.now() };
        seen.campaign.push(entry);
        stream.requests.push(entry);
        handlers.campaign?.(stream, request, stream.requests.length);
      });
      stream.on('end', () => {
        stream.ended = true;
        (handlers.onCampaignEnd ?? ((s) => s.end()))(stream);
      });
      stream.on('cancelled', () => { stream.cancelled = true; });
      stream.on('error', () => {});
    },
    Leader(call, callback) {
      seen.leader.push({ request: call.request, at: performance.now() });
      (handlers.leader ?? ((c, cb) => cb(null, {})))(call, callback, seen.leader.length);
    },
    Observe(call) {
      seen.observe.push(call);
      call.on('cancelled', () => { call.cancelled = true; });
      call.on('error', () => {});
      handlers.observe?.(call, seen.observe.length);
    },
  });
  const port = await new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    address: `127.0.0.1:${port}`,
    seen,
    close() {
      server.forceShutdown();
    },
  };
}

/**
 * Counts the answers the client has processed (KeepAlive, Campaign and Observe streams, used or
 * ignored) through the client's test seam. `await answers.processed(n)` resolves once n answers
 * in all have been processed since this was called: a test waits for that instead of sleeping.
 */
export function recordAnswers(t) {
  let count = 0;
  const waiting = [];
  const remove = onAnswerProcessed(() => {
    count += 1;
    for (const w of waiting.filter((w) => count >= w.n)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
  });
  t.after(remove);
  return {
    get count() {
      return count;
    },
    processed(n, ms = 5000) {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${count} answers processed, not ${n}, within ${ms} ms`)), ms);
        waiting.push({ n, resolve: () => { clearTimeout(timer); resolve(); } });
      });
    },
  };
}

/** Puts a ManualClock in place of the system's for this test. */
export function manualClock(t) {
  const clock = new ManualClock();
  t.after(useClock(clock));
  return clock;
}

/** Every callback and promise continuation already due has run (no timer involved). */
export const settled = () => new Promise((resolve) => setImmediate(resolve));
