import { hostname } from 'node:os';
import { inspect, type InspectOptions } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import {
  CampaignStream, Leadership, Observation, checkValue, deliverTo, leaderOf, type CampaignOptions, type Leader,
} from './election';
import { leadUntilDone, type LeadOptions, type LeadWork } from './lead';
import { LeaseLostError, LockNotAcquiredError, LockServiceError, errorFromStatus } from './errors';
import { Lease } from './lease';
import { Connection, checkChannelOptions } from './connection';
import type { AcquireResponse__Output } from './proto/redlock/v1/AcquireResponse';
import type { LeaderResponse__Output } from './proto/redlock/v1/LeaderResponse';
import { RetryPolicy, unaryRetryWaitMs, type RetryOptions } from './retry';
import { fromDuration, now, sleep, toDuration } from './time';
import { newToken } from './token';
import { channelTarget } from './target';
import { Transport } from './transport';

/** Where redlockd listens, and how to reach it. */
export interface ConnectOptions {
  /**
   * `host:port`; or several replicas, as an array or one string with commas (IP addresses:
   * `['10.0.0.1:50051', '10.0.0.2:50051']`); or any grpc-js target, e.g. `dns:redlockd:50051`
   * for a name with several addresses. Calls are spread over every address (round_robin), so a
   * kept stream reopened after a replica went away reaches one that is up.
   */
  address: string | readonly string[];
  /** Default: insecure (plaintext). */
  credentials?: grpc.ChannelCredentials;
  /**
   * grpc-js channel options, over the client's own (round_robin, reconnect backoff 100 ms to
   * 1 s). `grpc.keepalive_time_ms` is refused: see the README, "A replica that goes silent".
   */
  channelOptions?: grpc.ChannelOptions;
}

export interface LockClientOptions {
  /** Deadline of each call; an Acquire gets its wait on top (default 5000 ms). */
  callTimeoutMs?: number;
  /** Retries of UNAVAILABLE (and, for Acquire, DEADLINE_EXCEEDED); default 4 attempts, 50 ms doubling to 1 s. */
  retry?: RetryOptions;
  /** Free text operators see for this client's leases (default: `${hostname} pid ${pid}`). */
  owner?: string;
}

export interface AcquireOptions {
  /** How long the lock lives unless extended or kept alive. */
  ttlMs: number;
  /** How long to wait while someone else holds the lock (default 0: one attempt). */
  waitMs?: number;
  /** Aborting gives the acquire up; a lease granted anyway is released. */
  signal?: AbortSignal;
}

/** Refreshes of a grant that came too late; more means every answer is slow, not the wait. */
const MAX_REFRESHES = 3;

/** Each client's transport, for the conformance runner's Describe (testing.ts); nothing else. */
const transports = new WeakMap<LockClient, Transport>();

/** @internal The transport `client` makes its unary calls with. */
export function transportOf(client: LockClient): Transport {
  const transport = transports.get(client);
  if (transport === undefined) {
    throw new TypeError('not a LockClient');
  }
  return transport;
}

/**
 * The redlockd client. Hands out {@link Lease}s and keeps the token, the deadlines and the
 * renewals to itself.
 *
 * It makes each lease's token itself, so an Acquire retried after UNAVAILABLE or
 * DEADLINE_EXCEEDED carries the same token: the server refreshes the lease it may already
 * have granted instead of granting a second one.
 */
export class LockClient {
  /** The address (or the replicas' addresses, comma-separated) the client talks to. */
  readonly target: string;
  readonly owner: string;
  readonly callTimeoutMs: number;
  readonly retry: RetryPolicy;
  readonly #connection: Connection;
  readonly #transport: Transport;

  /**
   * `target`: `host:port`, several replicas' addresses (an array, or a string with commas), a
   * grpc-js target such as `dns:name:port`, or {@link ConnectOptions}.
   */
  constructor(target: string | readonly string[] | ConnectOptions, opts: LockClientOptions = {}) {
    const connect: ConnectOptions = typeof target === 'string' || Array.isArray(target)
      ? { address: target as string | readonly string[] }
      : target as ConnectOptions;
    const address = channelTarget(connect.address);
    this.target = typeof connect.address === 'string' ? connect.address : connect.address.join(',');
    this.owner = opts.owner ?? `${hostname()} pid ${process.pid}`;
    this.callTimeoutMs = opts.callTimeoutMs ?? 5000;
    if (!(this.callTimeoutMs > 0)) {
      throw new RangeError('callTimeoutMs must be positive');
    }
    this.retry = new RetryPolicy(opts.retry);
    checkChannelOptions(connect.channelOptions);
    // Leases and elections go over the same channel; the caller's options win over the client's.
    this.#connection = new Connection(address, connect.credentials ?? grpc.credentials.createInsecure(),
      connect.channelOptions ?? {});
    this.#transport = new Transport(this.#connection, this.callTimeoutMs, this.retry);
    transports.set(this, this.#transport);
  }

  /**
   * Closes the channel: no new calls. Calls under way (KeepAlive, Campaign and Observe streams)
   * go on until they end: release, resign and close them first. An observation whose stream
   * ends after this stops instead of opening another.
   */
  close(): void {
    this.#connection.close();
  }

  /**
   * Takes the lock, waiting up to `waitMs` while someone else holds it.
   *
   * Rejects with {@link LockNotAcquiredError} when someone else still holds it after the wait,
   * and with {@link LockServiceError} for every other failure (CANCELLED when the signal
   * aborted it).
   */
  async acquire(resource: string, opts: AcquireOptions): Promise<Lease> {
    return this.#acquire(resource, opts, 0);
  }

  /**
   * Takes one of `permits` permits of the semaphore `resource` (at most `permits` holders at
   * once), waiting up to `waitMs` while every permit is held.
   *
   * Resolves with the same {@link Lease} as {@link acquire}, its `permit` saying which one
   * (1..N): extend it, keep it alive and release it as a lock. A semaphore and a lock on the same
   * name do not exclude each other. Every caller of one semaphore must give the same `permits`
   * (at most 1024): another number rejects with FAILED_PRECONDITION while any permit is held.
   * Rejects as {@link acquire}; an acquire given up on gives its token back (every permit's,
   * when no answer said which one it got).
   */
  async acquirePermit(resource: string, permits: number, opts: AcquireOptions): Promise<Lease> {
    return this.#acquire(resource, opts, checkPermits(permits));
  }

  async #acquire(resource: string, opts: AcquireOptions, permits: number): Promise<Lease> {
    if (typeof resource !== 'string') {
      throw new TypeError('resource must be a string');
    }
    if (typeof opts?.ttlMs !== 'number' || Number.isNaN(opts.ttlMs)) {
      throw new TypeError('ttlMs must be a number');
    }
    const { ttlMs, signal } = opts;
    const waitMs = opts.waitMs ?? 0;
    const token = newToken();
    const start = now();
    const aborted = () => new LockServiceError(grpc.status.CANCELLED,
      `acquire of resource '${resource}' was aborted`, resource, { cause: signal?.reason });
    if (signal?.aborted) {
      throw aborted();
    }
    let attempt = 1;
    let timeouts = 0; // attempts that ended DEADLINE_EXCEEDED: those the policy counts
    let refreshes = 0;
    let mayHold = false; // an earlier attempt may have been granted: giving up must give it back
    let named: number | undefined; // the permit an answer named (a same-token retry gets it again)
    // UNAVAILABLE is retried until then: the wait, and a call timeout for the answer.
    const deadline = start + Math.max(0, waitMs) + this.callTimeoutMs;
    // The lock, the permit an answer named, or (no answer yet) every permit: any may be held.
    const giveBack = () => this.#transport.releaseQuietly(resource, token,
      permits === 0 || named !== undefined ? [named ?? 0] : Array.from({ length: permits }, (_, i) => i + 1));
    for (;;) {
      const waitLeft = Math.max(0, waitMs - (now() - start));
      const sent = now();
      const generation = this.#connection.generation;
      const outcome = await this.#transport.once<AcquireResponse__Output>(
        (stub, options, callback) => stub.Acquire({
          resource, ttl: toDuration(ttlMs), wait: toDuration(waitLeft), owner: this.owner, token, permits,
        }, options, callback),
        waitLeft + this.callTimeoutMs, signal);
      if (signal?.aborted) {
        // The server may have granted before it heard of the cancel, and does not release a
        // lease whose token the caller chose: only this client can.
        giveBack();
        throw aborted();
      }
      if (outcome.ok) {
        const granted = outcome.value.lease;
        named = granted?.permit ?? 0;
        const validity = fromDuration(granted?.validity);
        const leaseDeadline = sent + validity;
        const left = leaseDeadline - now();
        if (left < validity / 2 && refreshes < MAX_REFRESHES) {
          // Typically after a long wait: the refresh under the same token answers at once.
          refreshes++;
          mayHold = true;
          continue;
        }
        if (left <= 0 || granted === null) {
          giveBack();
          throw new LockServiceError(grpc.status.DEADLINE_EXCEEDED,
            `resource '${resource}': each grant ran out before its answer arrived`, resource);
        }
        return new Lease(this.#transport, resource, token, BigInt(granted.fencingToken), ttlMs, leaseDeadline,
          granted.permit);
      }
      const unknownOutcome = outcome.code === grpc.status.UNAVAILABLE
        || outcome.code === grpc.status.DEADLINE_EXCEEDED;
      if (outcome.code === grpc.status.DEADLINE_EXCEEDED) {
        timeouts++;
        // Its replica may be silent (a frozen host, a partition): the retry (rule 2: an Acquire's
        // attempts are bounded by the policy, each by its wait plus the call timeout) goes over
        // new connections, on which such a replica is not picked (connection.ts).
        this.#connection.renew(generation);
      }
      // A pushback's wait comes out of the Acquire's wait too: the retry sends what is left.
      const wait = unaryRetryWaitMs(outcome.code, outcome.pushbackMs, attempt, this.retry, now(), deadline, timeouts);
      if (wait !== undefined) {
        mayHold = true;
        try {
          await sleep(wait, signal);
        } catch {
          giveBack();
          throw aborted();
        }
        attempt++;
        continue;
      }
      if (unknownOutcome || mayHold) {
        // An attempt may have been granted after its answer was lost: give it back.
        giveBack();
      }
      throw errorFromStatus(outcome.code, outcome.details, resource);
    }
  }

  /** One attempt: the lease, or null when someone else holds the lock. */
  async tryAcquire(resource: string, opts: { ttlMs: number; signal?: AbortSignal }): Promise<Lease | null> {
    try {
      return await this.acquire(resource, { ttlMs: opts.ttlMs, waitMs: 0, signal: opts.signal });
    } catch (e) {
      if (e instanceof LockNotAcquiredError) {
        return null;
      }
      throw e;
    }
  }

  /** One attempt: a permit's lease, or null when every permit is held. */
  async tryAcquirePermit(resource: string, permits: number,
    opts: { ttlMs: number; signal?: AbortSignal }): Promise<Lease | null> {
    try {
      return await this.acquirePermit(resource, permits, { ttlMs: opts.ttlMs, waitMs: 0, signal: opts.signal });
    } catch (e) {
      if (e instanceof LockNotAcquiredError) {
        return null;
      }
      throw e;
    }
  }

  /**
   * Runs `work` while holding the lock: acquires (waiting up to `waitMs`), keeps the lease
   * alive, awaits the work and releases. Resolves with the work's result. If the lease was
   * lost meanwhile, rejects with {@link LeaseLostError} once the work has settled (the work
   * can watch `lease.valid` or `lease.signal` to stop early); the work's own error, if any,
   * is then the LeaseLostError's `cause`.
   */
  async withLock<T>(resource: string, opts: AcquireOptions, work: (lease: Lease) => Promise<T> | T): Promise<T> {
    return runKept(await this.acquire(resource, opts), work);
  }

  /**
   * Runs `work` while holding one of `permits` permits of `resource` (see
   * {@link acquirePermit}), as {@link withLock} does with the lock: kept alive while the work
   * runs, released after; rejects with {@link LeaseLostError} once the work has settled if the
   * permit was lost meanwhile (watch `lease.signal` to stop early).
   */
  async withPermit<T>(resource: string, permits: number, opts: AcquireOptions,
    work: (lease: Lease) => Promise<T> | T): Promise<T> {
    return runKept(await this.acquirePermit(resource, permits, opts), work);
  }

  /**
   * Runs for leader of `election` with `value` (what Leader and Observe report while this
   * candidate leads; at most 256 UTF-8 bytes). Resolves with the {@link Leadership} once this
   * candidate leads; it is renewed every ttl/4 until resigned or lost.
   *
   * One Campaign stream carries the candidacy: its first request goes out at once, then one
   * every ttl/4 while waiting too, each with the candidate's own token (made here). A stream
   * that breaks or ends UNAVAILABLE is opened again with that token (see {@link Leadership}).
   * Rejects with {@link LockNotAcquiredError} (ABORTED) when
   * `waitMs` passes without leading (the candidacy is withdrawn), with a CANCELLED
   * {@link LockServiceError} when `signal` aborts it (withdrawn the same way), and with
   * {@link LockServiceError} carrying the stream's status for every other failure.
   */
  async campaign(election: string, value: string, opts: CampaignOptions): Promise<Leadership> {
    if (typeof election !== 'string') {
      throw new TypeError('election must be a string');
    }
    checkValue(election, value);
    if (typeof opts?.ttlMs !== 'number' || Number.isNaN(opts.ttlMs)) {
      throw new TypeError('ttlMs must be a number');
    }
    const { ttlMs, waitMs, signal } = opts;
    if (waitMs !== undefined && (typeof waitMs !== 'number' || Number.isNaN(waitMs))) {
      throw new TypeError('waitMs must be a number');
    }
    const aborted = () => new LockServiceError(grpc.status.CANCELLED,
      `campaign in election '${election}' was aborted`, election, { cause: signal?.reason });
    if (signal?.aborted) {
      throw aborted();
    }
    const callTimeoutMs = this.callTimeoutMs;
    return new Promise((resolve, reject) => {
      let settled = false;
      let waitTimer: NodeJS.Timeout | undefined;
      const onAbort = () => withdraw(aborted());
      const settle = () => {
        settled = true;
        clearTimeout(waitTimer);
        signal?.removeEventListener('abort', onAbort);
      };
      const stream = new CampaignStream(this.#connection, election, value, ttlMs, this.retry, {
        answered: (response, sentAt) => {
          if (!settled) {
            settle();
            resolve(new Leadership(stream, election, ttlMs, callTimeoutMs, response, sentAt));
          }
        },
        ended: (end) => {
          if (!settled) {
            settle();
            reject(end.code === grpc.status.OK
              ? new LockServiceError(grpc.status.UNAVAILABLE,
                `election '${election}': the Campaign stream ended before this candidate led`, election)
              : errorFromStatus(end.code, end.details, election));
          }
        },
        resumable: () => false, // replaced by the Leadership before it leads
      });
      // Withdrawing half-closes: the server withdraws the candidacy, or resigns a leadership
      // granted in that instant (its answer is not taken any more).
      const withdraw = (error: LockServiceError) => {
        if (!settled) {
          settle();
          void stream.halfClose();
          reject(error);
        }
      };
      if (waitMs !== undefined) {
        waitTimer = setTimeout(() => withdraw(new LockNotAcquiredError(grpc.status.ABORTED,
          `election '${election}': not leading after waiting ${waitMs} ms`, election)), Math.max(0, waitMs));
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Runs `work` while this candidate leads `election`: campaigns with `value` (as long as it
   * takes), then calls `work(leadership, signal)`. `signal` is aborted the moment the leadership
   * is lost (its reason: the {@link LeaseLostError}), or when `opts.signal` aborts (reason: a
   * CANCELLED {@link LockServiceError}).
   *
   * - `work` returns while leading: resigns, resolves with its result.
   * - The leadership was lost: once `work` has settled, rejects with the LeaseLostError; with
   *   `requeue: true` campaigns again and runs `work` again instead, until `opts.signal` aborts.
   * - `opts.signal` aborts: withdraws the candidacy, or (while `work` runs) aborts work's signal,
   *   waits for `work` to settle and resigns; rejects with a CANCELLED LockServiceError whose
   *   `cause` is the signal's reason.
   * - `work` throws: resigns and rejects with its error, never requeued (when the leadership
   *   was lost too, with a LeaseLostError whose `cause` is work's error).
   * - A campaign that fails (its stream ends with an error) rejects with that error.
   */
  async lead<T>(election: string, value: string, opts: LeadOptions, work: LeadWork<T>): Promise<T> {
    if (typeof work !== 'function') {
      throw new TypeError('work must be a function');
    }
    checkValue(election, value);
    const { ttlMs, signal } = opts ?? {};
    return leadUntilDone(election, (s) => this.campaign(election, value, { ttlMs, signal: s }), work,
      opts?.requeue ?? false, signal);
  }

  /**
   * The current leader of `election`, or null when it has none (UNAVAILABLE is retried).
   * Rejects with a CANCELLED LockServiceError when `signal` aborts first.
   */
  async leader(election: string, opts: { signal?: AbortSignal } = {}): Promise<Leader | null> {
    if (typeof election !== 'string') {
      throw new TypeError('election must be a string');
    }
    const response = await this.#transport.call<LeaderResponse__Output>(
      (_stub, options, callback) => this.#connection.elections.Leader({ election }, options, callback), election,
      { signal: opts.signal, what: `leader of election '${election}'` });
    return leaderOf(response.leader);
  }

  /**
   * Follows `election`: an {@link Observation}, an async iterable of its leader states (a
   * {@link Leader}, or null when it has none): the current one, then every change. A stream that
   * ends is opened again; states already passed on, or older than a term already seen, are not
   * repeated. Iteration ends when `signal` aborts, the loop leaves (`break`) or `close()` is
   * called.
   *
   * The callback form, `observe(election, callback)`, calls `callback` with each state instead,
   * until the returned Observation is closed; no callback runs once `close()` returned.
   */
  observe(election: string, opts?: { signal?: AbortSignal }): Observation;
  observe(election: string, callback: (leader: Leader | null) => void): Observation;
  observe(election: string, arg: { signal?: AbortSignal } | ((leader: Leader | null) => void) = {}): Observation {
    if (typeof election !== 'string') {
      throw new TypeError('election must be a string');
    }
    if (typeof arg === 'function') {
      return deliverTo(new Observation(this.#connection, election, this.retry), arg);
    }
    if (arg === null || typeof arg !== 'object') {
      throw new TypeError('observe takes a callback or options ({ signal })');
    }
    return new Observation(this.#connection, election, this.retry, arg.signal);
  }

  toString(): string {
    return `LockClient[target=${this.target}, owner=${this.owner}]`;
  }

  toJSON(): { target: string; owner: string; callTimeoutMs: number } {
    return { target: this.target, owner: this.owner, callTimeoutMs: this.callTimeoutMs };
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `LockClient ${inspect(this.toJSON(), options)}`;
  }
}

/** withLock's and withPermit's work: `work(lease)` with the lease kept alive, released after. */
async function runKept<T>(lease: Lease, work: (lease: Lease) => Promise<T> | T): Promise<T> {
  const { resource } = lease;
  let result: T;
  try {
    lease.keepAlive();
    try {
      result = await work(lease);
    } catch (e) {
      const lost = lease.lostError;
      if (lost !== undefined && e !== lost) {
        throw new LeaseLostError(lost.code, lost.details, resource, { cause: e });
      }
      throw e;
    }
  } finally {
    try {
      await lease.release();
    } catch {
      // Expired, lost or unreachable: the lease runs out by itself.
    }
  }
  const lost = lease.lostError;
  if (lost !== undefined) {
    throw lost;
  }
  return result;
}

/**
 * A semaphore's N as the caller gave it: a positive integer (0 would ask for a lock). Above 1024
 * is the server's to refuse (INVALID_ARGUMENT), so that the bound lives in one place.
 */
function checkPermits(permits: number): number {
  if (typeof permits !== 'number' || !Number.isInteger(permits) || permits < 1) {
    throw new RangeError(`permits must be a positive integer, not ${String(permits)}`);
  }
  return permits;
}
