import { inspect, type InspectOptions } from 'node:util';
import { status as Status } from '@grpc/grpc-js';
import { LeaseLostError, LockServiceError, abortable, abortedError } from './errors';
import { KeptStream, Lifetime, guardMs, shortenedDeadline, silenceMs, waitingForReady, type LostCallback } from './kept';
import type { ExtendResponse__Output } from './proto/redlock/v1/ExtendResponse';
import type { KeepAliveRequest } from './proto/redlock/v1/KeepAliveRequest';
import type { KeepAliveResponse__Output } from './proto/redlock/v1/KeepAliveResponse';
import type { ReleaseResponse__Output } from './proto/redlock/v1/ReleaseResponse';
import { attemptTimeoutMs } from './retry';
import type { Transport } from './transport';
import { fromDuration, now, toDuration } from './time';

export { guardMs };
export type { LostCallback };

/** An extend of a kept lease waiting for an answer that echoes its request (or a later one). */
interface TtlWaiter {
  sequence: number;
  resolve(): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A held lock. Knows its local deadline (the time the request was sent, plus the validity the
 * server returned) on the monotonic clock of `performance.now()`. The token stays inside: it
 * appears in no string form, JSON or error.
 *
 * The lease counts as valid until a guard before that deadline (ttl/20, at most 100 ms), and
 * is reported lost then: a timer that runs a little late still tells the holder before the
 * deadline itself has passed, which is when another holder may be granted the lock.
 */
export class Lease {
  /** The name of the lock. */
  readonly resource: string;
  /**
   * Strictly increases per resource across grants (per permit, for a permit): send it with every
   * write the lock protects.
   */
  readonly fencingToken: bigint;
  /** Which of the semaphore's N permits this lease holds (1..N); 0 for a lock. */
  readonly permit: number;

  readonly #transport: Transport;
  readonly #token: string;
  readonly #lifetime: Lifetime;
  readonly #ttlWaiters = new Set<TtlWaiter>();
  #ttlMs: number;
  #kept: KeptStream<KeepAliveRequest, KeepAliveResponse__Output> | undefined;

  /** @internal Leases come from LockClient.acquire. */
  constructor(transport: Transport, resource: string, token: string, fencingToken: bigint, ttlMs: number,
    deadline: number, permit = 0) {
    this.#transport = transport;
    this.resource = resource;
    this.#token = token;
    this.fencingToken = fencingToken;
    this.permit = permit;
    this.#ttlMs = ttlMs;
    this.#lifetime = new Lifetime(this.#what(), resource, ttlMs, deadline,
      (error) => this.#stop(error));
  }

  /**
   * The lease's ttl in ms: the one it was acquired with, or the last `extend`'s. KeepAlive
   * renews with it.
   */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /**
   * True until the guard before the local deadline is reached (unless a renewal moved the
   * deadline), the lease is lost, or it is released.
   */
  get valid(): boolean {
    return this.#lifetime.valid;
  }

  /** Milliseconds left while valid (up to the guard before the deadline); 0 once not valid. */
  get remainingMs(): number {
    return this.#lifetime.remainingMs;
  }

  /**
   * The local deadline on `performance.now()`: the send time of the request that granted or
   * last renewed the lease, plus the validity the server returned (or earlier, after an extend
   * to a shorter ttl). Another holder may be granted the lock after it; this lease stops
   * counting as valid a guard before it.
   */
  get deadline(): number {
    return this.#lifetime.deadline;
  }

  /** Aborted when the lease is lost, with the LeaseLostError as its reason. */
  get signal(): AbortSignal {
    return this.#lifetime.signal;
  }

  /** Why the lease was lost, once it is. */
  get lostError(): LeaseLostError | undefined {
    return this.#lifetime.lostError;
  }

  /**
   * Renews the lease for `ttlMs` from now, and makes `ttlMs` its ttl.
   *
   * A kept lease (see {@link keepAlive}) changes its ttl through its KeepAlive stream: a request
   * with the new ttl, and this resolves when an answer echoes it (or a later request). From the
   * moment that request is sent, answers to earlier requests are ignored, and a shorter ttl
   * cuts the deadline at once (send time + ttl - ttl/100 - 2 ms, the least the nodes may hold
   * it); every later request carries the new ttl, every ttl/4. Rejects with a DEADLINE_EXCEEDED
   * LockServiceError when no answer came within the call timeout (the new ttl stays in force).
   * A ttl the server refuses ends the stream INVALID_ARGUMENT, which loses the lease.
   *
   * A lease that is not kept is renewed with a unary Extend; UNAVAILABLE is retried while the
   * lease is still valid.
   *
   * Rejects with LeaseLostError when the lease is no longer held, and with a CANCELLED
   * LockServiceError when `signal` aborts first (a unary Extend is cancelled; on a kept lease the
   * new ttl was sent and stays in force: only the wait for its answer is given up).
   */
  async extend(ttlMs: number, opts: { signal?: AbortSignal } = {}): Promise<this> {
    if (typeof ttlMs !== 'number' || Number.isNaN(ttlMs)) {
      throw new TypeError('ttlMs must be a number');
    }
    if (this.#lifetime.ended) {
      throw this.#releasedError();
    }
    if (this.#lifetime.lostError !== undefined) {
      throw this.#lifetime.lostError;
    }
    const { signal } = opts;
    const aborted = () => abortedError(`extend of resource '${this.resource}'`, this.resource, signal);
    if (signal?.aborted) {
      throw aborted();
    }
    const kept = this.#kept;
    if (kept !== undefined) {
      if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) {
        // Sent on the stream, the server would end it (and the lease) INVALID_ARGUMENT.
        throw new LockServiceError(Status.INVALID_ARGUMENT, `${this.#what()}: the ttl must be `
          + 'positive', this.resource);
      }
      await this.#extendKept(kept, ttlMs, signal, aborted);
      return this;
    }
    const sent = now();
    let response: ExtendResponse__Output;
    try {
      response = await this.#transport.call<ExtendResponse__Output>(
        (stub, options, callback) => stub.Extend(
          { resource: this.resource, token: this.#token, ttl: toDuration(ttlMs), permit: this.permit }, options,
          callback),
        this.resource, { stillWorthIt: () => this.valid, signal, what: `extend of resource '${this.resource}'` });
    } catch (e) {
      if (e instanceof LockServiceError && e.code === Status.NOT_FOUND) {
        this.#lifetime.lose(e.code, e.details);
        throw this.#lifetime.lostError ?? new LeaseLostError(e.code, e.details, this.resource);
      }
      throw e;
    }
    if (this.#lifetime.open) {
      this.#ttlMs = ttlMs;
      this.#lifetime.ttlChanged(ttlMs);
      this.#lifetime.reset(sent + fromDuration(response.lease?.validity));
    }
    return this;
  }

  #extendKept(kept: KeptStream<KeepAliveRequest, KeepAliveResponse__Output>, ttlMs: number,
    signal: AbortSignal | undefined, aborted: () => Error): Promise<void> {
    this.#ttlMs = ttlMs;
    this.#lifetime.ttlChanged(ttlMs);
    const sequence = kept.nextSequence;
    kept.ignoreBefore(sequence);
    // A shorter ttl: the renewal this request makes may leave the key on the nodes for no longer
    // than that, so the belief may not outlive it (cut only moves the deadline back).
    this.#lifetime.cut(shortenedDeadline(now(), ttlMs));
    kept.setPeriod(ttlMs / 4);
    kept.send(); // while the stream is down, the next stream's first request carries it
    let waiter: TtlWaiter | undefined;
    return abortable(new Promise<void>((resolve, reject) => {
      const timeoutMs = this.#transport.callTimeoutMs;
      const added: TtlWaiter = {
        sequence,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#ttlWaiters.delete(added);
          reject(new LockServiceError(Status.DEADLINE_EXCEEDED, `${this.#what()}: no answer `
            + `to the ttl change within ${timeoutMs} ms`, this.resource));
        }, timeoutMs),
      };
      waiter = added;
      this.#ttlWaiters.add(added);
    }), signal, aborted, () => {
      if (waiter !== undefined && this.#ttlWaiters.delete(waiter)) {
        clearTimeout(waiter.timer);
      }
    });
  }

  #settleTtlWaiters(sequence: number): void {
    for (const waiter of [...this.#ttlWaiters]) {
      if (waiter.sequence <= sequence) {
        this.#ttlWaiters.delete(waiter);
        clearTimeout(waiter.timer);
        waiter.resolve();
      }
    }
  }

  #failTtlWaiters(error: Error): void {
    for (const waiter of this.#ttlWaiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.#ttlWaiters.clear();
  }

  #releasedError(): LeaseLostError {
    return new LeaseLostError(Status.FAILED_PRECONDITION, `${this.#what()} was released`,
      this.resource);
  }

  /**
   * Releases the lease (stopping its keep-alive). Idempotent: true only on the call that
   * released a lease a quorum still held. When `signal` aborts first it rejects with a CANCELLED
   * LockServiceError: the lease counts as released here all the same (the server releases it
   * when the half-close or the Release reaches it, or it runs out).
   */
  async release(opts: { signal?: AbortSignal } = {}): Promise<boolean> {
    const { signal } = opts;
    const what = `release of resource '${this.resource}'`;
    const aborted = () => abortedError(what, this.resource, signal);
    const kept = this.#kept;
    const held = this.#lifetime.open;
    if (!this.#lifetime.end()) {
      return false;
    }
    this.#failTtlWaiters(this.#releasedError());
    if (kept !== undefined && held) {
      // Half-close: the server releases and ends the stream OK (NOT_FOUND if it was not held).
      // While the stream is down, a new one is opened for it. The half-close is the release's
      // first attempt, held to an attempt's timeout: a stream on a replica that went silent
      // since its last answer ends never, and the Release below goes to another replica.
      const end = await abortable(kept.close(attemptTimeoutMs(this.#transport.callTimeoutMs)), signal, aborted);
      if (end.code === Status.OK) {
        return true;
      }
      if (end.code === Status.NOT_FOUND) {
        return false;
      }
      // The stream failed on its way out: fall back to a plain Release.
    }
    const response = await this.#transport.call<ReleaseResponse__Output>(
      (stub, options, callback) => stub.Release({ resource: this.resource, token: this.#token, permit: this.permit },
        options, callback),
      this.resource, { signal, what });
    return response.released;
  }

  /** Releases and ignores failures (an unreachable lease runs out by itself): for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch {
      // Expired, lost or unreachable: the lease runs out anyway.
    }
  }

  /**
   * Keeps the lease alive on a KeepAlive stream: a renewal every ttl/4, each moving the
   * deadline. A stream that breaks or ends UNAVAILABLE (a replica shutting down) is opened
   * again with the same token, on any replica, until the guarded deadline passes. The lease is
   * lost when the stream ends NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED or INVALID_ARGUMENT
   * (or OK without the holder asking), or when the guarded deadline passes without a renewal.
   */
  keepAlive(): this {
    if (this.#kept === undefined && this.#lifetime.open) {
      const { resource, permit } = this;
      const token = this.#token;
      this.#kept = new KeptStream<KeepAliveRequest, KeepAliveResponse__Output>({
        what: `KeepAlive stream of resource '${resource}'`,
        open: () => this.#transport.stub.KeepAlive(waitingForReady()),
        request: () => ({ resource, token, ttl: toDuration(this.#ttlMs), permit }),
        sequenceOf: (response) => response.sequence,
        periodMs: this.#ttlMs / 4,
        retry: this.#transport.retry,
        silenceMs: () => silenceMs(this.#ttlMs),
        connection: this.#transport.connection,
        shared: this.#transport.connection.answerTimes,
      }, {
        answered: (response, sentAt, sequence) => {
          if (response.lease === null) {
            return; // nothing to date a deadline by
          }
          // Only forward: an answer about an earlier renewal (or a jeopardy report) may arrive
          // after a later one.
          this.#lifetime.renewed(sentAt + fromDuration(response.lease.validity));
          this.#settleTtlWaiters(sequence);
        },
        ended: (end) => {
          if (end.code === Status.OK) {
            this.#lifetime.lose(Status.UNAVAILABLE, `the KeepAlive stream of resource '${resource}' ended unexpectedly`);
          } else {
            this.#lifetime.lose(end.code, end.details);
          }
        },
        // Until the guarded deadline passes (the lifetime's timer then reports the loss).
        resumable: () => this.#lifetime.open,
      });
    }
    return this;
  }

  /** Calls `callback` once when the lease is lost; at once if it already is. */
  onLost(callback: LostCallback): this {
    this.#lifetime.onLost(callback);
    return this;
  }

  /** @internal For an acquire whose caller no longer wants it: released in the background. */
  abandon(): void {
    if (this.#lifetime.end()) {
      this.#kept?.cancel();
      this.#transport.releaseQuietly(this.resource, this.#token, [this.permit]);
    }
  }

  /** On the loss: stop renewing and give the lease back (rule 7). */
  #stop(error: LeaseLostError): void {
    this.#failTtlWaiters(error);
    // A live stream is cancelled, which grpc-js does by half-closing first: the server releases.
    const cancelled = this.#kept?.cancel() ?? false;
    if (!cancelled && (error.code === Status.DEADLINE_EXCEEDED || error.code === Status.UNAVAILABLE)) {
      // Ran out with no stream open (never kept, or waiting to reopen), or the server refused
      // the stream with "do not retry" (rule 17): a Release instead.
      this.#transport.releaseQuietly(this.resource, this.#token, [this.permit]);
    }
  }

  /** The lease in messages: "lease on resource 'r'", or "lease on permit 2 of resource 'r'". */
  #what(): string {
    return this.permit === 0 ? `lease on resource '${this.resource}'`
      : `lease on permit ${this.permit} of resource '${this.resource}'`;
  }

  toString(): string {
    const permit = this.permit === 0 ? '' : `permit=${this.permit}, `;
    return `Lease[resource=${this.resource}, ${permit}fencingToken=${this.fencingToken}, `
      + `remaining=${Math.floor(this.remainingMs)}ms]`;
  }

  /** A lock's has no `permit`; a permit's names it. */
  toJSON(): { resource: string; permit?: number; fencingToken: string; valid: boolean; remainingMs: number } {
    return {
      resource: this.resource,
      ...(this.permit === 0 ? {} : { permit: this.permit }),
      fencingToken: this.fencingToken.toString(),
      valid: this.valid,
      remainingMs: this.remainingMs,
    };
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    const shown = { resource: this.resource, ...(this.permit === 0 ? {} : { permit: this.permit }),
      fencingToken: this.fencingToken, valid: this.valid, remainingMs: Math.floor(this.remainingMs) };
    return `Lease ${inspect(shown, options)}`;
  }
}
