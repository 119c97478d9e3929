import { inspect, type InspectOptions } from 'node:util';
import { status as Status } from '@grpc/grpc-js';
import { LeaseLostError, LockServiceError } from './errors';
import { LeaseKeeper, type StreamEnd } from './keeper';
import type { ExtendResponse__Output } from './proto/redlock/v1/ExtendResponse';
import type { ReleaseResponse__Output } from './proto/redlock/v1/ReleaseResponse';
import type { Transport } from './transport';
import { fromDuration, now, toDuration } from './time';

/** How long before its deadline a lease stops counting as valid: ttl/20, at most 100 ms. */
export function guardMs(ttlMs: number): number {
  return Math.min(ttlMs / 20, 100);
}

export type LostCallback = (error: LeaseLostError) => void;

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
  /** Strictly increases per resource across grants: send it with every write the lock protects. */
  readonly fencingToken: bigint;
  /** The ttl the lease was acquired with, in ms (KeepAlive renews with it). */
  readonly ttlMs: number;

  readonly #transport: Transport;
  readonly #token: string;
  readonly #guardMs: number;
  readonly #lostController = new AbortController();
  #listeners: LostCallback[] = [];
  #deadline: number;
  #released = false;
  #lost: LeaseLostError | undefined;
  #keeper: LeaseKeeper | undefined;
  #expiry: NodeJS.Timeout | undefined;

  /** @internal Leases come from LockClient.acquire. */
  constructor(transport: Transport, resource: string, token: string, fencingToken: bigint, ttlMs: number,
    deadline: number) {
    this.#transport = transport;
    this.resource = resource;
    this.#token = token;
    this.fencingToken = fencingToken;
    this.ttlMs = ttlMs;
    this.#guardMs = guardMs(ttlMs);
    this.#deadline = deadline;
    this.#scheduleExpiry();
  }

  /**
   * True until the guard before the local deadline is reached (unless a renewal moved the
   * deadline), the lease is lost, or it is released.
   */
  get valid(): boolean {
    return !this.#released && this.#lost === undefined && now() < this.#deadline - this.#guardMs;
  }

  /** Milliseconds left while valid (up to the guard before the deadline); 0 once not valid. */
  get remainingMs(): number {
    return this.valid ? this.#deadline - this.#guardMs - now() : 0;
  }

  /**
   * The local deadline on `performance.now()`: the send time of the request that granted or
   * last renewed the lease, plus the validity the server returned. Another holder may be
   * granted the lock after it; this lease stops counting as valid a guard before it.
   */
  get deadline(): number {
    return this.#deadline;
  }

  /** Aborted when the lease is lost, with the LeaseLostError as its reason. */
  get signal(): AbortSignal {
    return this.#lostController.signal;
  }

  /** Why the lease was lost, once it is. */
  get lostError(): LeaseLostError | undefined {
    return this.#lost;
  }

  /**
   * Renews the lease for `ttlMs` from now. UNAVAILABLE is retried while the lease is still
   * valid. Rejects with LeaseLostError when the lease is no longer held.
   */
  async extend(ttlMs: number): Promise<this> {
    if (this.#released) {
      throw new LeaseLostError(Status.FAILED_PRECONDITION, `lease on resource '${this.resource}' was released`,
        this.resource);
    }
    if (this.#lost !== undefined) {
      throw this.#lost;
    }
    const sent = now();
    let response: ExtendResponse__Output;
    try {
      response = await this.#transport.call<ExtendResponse__Output>(
        (stub, options, callback) => stub.Extend(
          { resource: this.resource, token: this.#token, ttl: toDuration(ttlMs) }, options, callback),
        this.resource, () => this.valid);
    } catch (e) {
      if (e instanceof LockServiceError && e.code === Status.NOT_FOUND) {
        this.#lose(e.code, e.details);
        throw this.#lost ?? new LeaseLostError(e.code, e.details, this.resource);
      }
      throw e;
    }
    if (!this.#released && this.#lost === undefined) {
      this.#deadline = sent + fromDuration(response.lease?.validity);
      this.#scheduleExpiry();
    }
    return this;
  }

  /**
   * Releases the lease (stopping its keep-alive). Idempotent: true only on the call that
   * released a lease a quorum still held.
   */
  async release(): Promise<boolean> {
    if (this.#released) {
      return false;
    }
    this.#released = true;
    this.#clearExpiry();
    const keeper = this.#keeper;
    if (keeper !== undefined && this.#lost === undefined) {
      // Half-close: the server releases and ends the stream OK (NOT_FOUND if it was not held).
      const end = await this.#awaitEnd(keeper);
      if (end.code === Status.OK) {
        return true;
      }
      if (end.code === Status.NOT_FOUND) {
        return false;
      }
      // The stream failed on its way out: fall back to a plain Release.
    }
    const response = await this.#transport.call<ReleaseResponse__Output>(
      (stub, options, callback) => stub.Release({ resource: this.resource, token: this.#token }, options, callback),
      this.resource);
    return response.released;
  }

  #awaitEnd(keeper: LeaseKeeper): Promise<StreamEnd> {
    return new Promise((resolve) => {
      const timeoutMs = this.#transport.callTimeoutMs;
      const timer = setTimeout(() => {
        keeper.cancel();
        resolve({ code: Status.DEADLINE_EXCEEDED, details: `no answer within ${timeoutMs} ms` });
      }, timeoutMs);
      keeper.halfClose().then((end) => {
        clearTimeout(timer);
        resolve(end);
      });
    });
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
   * deadline. If the stream ends or the deadline passes without a renewal, the lease is lost.
   */
  keepAlive(): this {
    if (this.#keeper === undefined && !this.#released && this.#lost === undefined) {
      this.#keeper = new LeaseKeeper(this.#transport.stub, this.resource, this.#token, this.ttlMs, {
        renewed: (deadline) => {
          if (deadline > this.#deadline && !this.#released && this.#lost === undefined) {
            this.#deadline = deadline;
            this.#scheduleExpiry();
          }
        },
        ended: (end) => {
          if (end.code === Status.OK) {
            this.#lose(Status.UNAVAILABLE, `the KeepAlive stream of resource '${this.resource}' ended unexpectedly`);
          } else {
            this.#lose(end.code, end.details);
          }
        },
      });
    }
    return this;
  }

  /** Calls `callback` once when the lease is lost; at once if it already is. */
  onLost(callback: LostCallback): this {
    if (this.#lost !== undefined) {
      callback(this.#lost);
    } else {
      this.#listeners.push(callback);
    }
    return this;
  }

  /** @internal For an acquire whose caller no longer wants it: released in the background. */
  abandon(): void {
    if (!this.#released) {
      this.#released = true;
      this.#clearExpiry();
      this.#transport.releaseQuietly(this.resource, this.#token);
    }
  }

  #lose(code: number, details: string): void {
    if (this.#released || this.#lost !== undefined) {
      return;
    }
    const error = new LeaseLostError(code, details, this.resource);
    this.#lost = error;
    this.#clearExpiry();
    this.#keeper?.cancel();
    const listeners = this.#listeners;
    this.#listeners = [];
    this.#lostController.abort(error);
    for (const listener of listeners) {
      try {
        listener(error);
      } catch (e) {
        process.emitWarning(`a loss callback of the lease on resource '${this.resource}' threw: ${String(e)}`);
      }
    }
  }

  #scheduleExpiry(): void {
    this.#clearExpiry();
    const delay = this.#deadline - this.#guardMs - now();
    this.#expiry = setTimeout(() => {
      this.#expiry = undefined;
      if (this.#released || this.#lost !== undefined) {
        return;
      }
      if (now() < this.#deadline - this.#guardMs) {
        this.#scheduleExpiry(); // woke a little early
        return;
      }
      this.#lose(Status.DEADLINE_EXCEEDED, `lease on resource '${this.resource}' ran out: its local deadline `
        + `came within ${this.#guardMs} ms without a renewal`);
    }, Math.max(0, Math.ceil(delay)));
    this.#expiry.unref();
  }

  #clearExpiry(): void {
    if (this.#expiry !== undefined) {
      clearTimeout(this.#expiry);
      this.#expiry = undefined;
    }
  }

  toString(): string {
    return `Lease[resource=${this.resource}, fencingToken=${this.fencingToken}, `
      + `remaining=${Math.floor(this.remainingMs)}ms]`;
  }

  toJSON(): { resource: string; fencingToken: string; valid: boolean; remainingMs: number } {
    return {
      resource: this.resource,
      fencingToken: this.fencingToken.toString(),
      valid: this.valid,
      remainingMs: this.remainingMs,
    };
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    const shown = { resource: this.resource, fencingToken: this.fencingToken, valid: this.valid,
      remainingMs: Math.floor(this.remainingMs) };
    return `Lease ${inspect(shown, options)}`;
  }
}
