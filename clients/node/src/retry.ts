import { status } from '@grpc/grpc-js';
import { retryWaitMs } from './pushback';

/**
 * How UNAVAILABLE (and, for Acquire, DEADLINE_EXCEEDED) is retried: the same call with the
 * same token, so a retry can never take a second lock. Backoff doubles from
 * `initialBackoffMs` up to `maxBackoffMs`. UNAVAILABLE is retried until the call's own deadline
 * (see {@link unaryRetryWaitMs}).
 */
export interface RetryOptions {
  /**
   * Attempts of an Acquire that end DEADLINE_EXCEEDED, the first included, and of a candidate's
   * Campaign streams refused in a row (default 4). 1: no retries of anything.
   */
  maxAttempts?: number;
  /** Backoff after the first failed attempt (default 50 ms). */
  initialBackoffMs?: number;
  /** Longest backoff (default 1000 ms). */
  maxBackoffMs?: number;
}

export class RetryPolicy {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;

  constructor(opts: RetryOptions = {}) {
    this.maxAttempts = opts.maxAttempts ?? 4;
    this.initialBackoffMs = opts.initialBackoffMs ?? 50;
    this.maxBackoffMs = opts.maxBackoffMs ?? 1000;
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1) {
      throw new RangeError('retry.maxAttempts must be an integer of at least 1');
    }
    if (!(this.initialBackoffMs >= 0) || !(this.maxBackoffMs >= this.initialBackoffMs)) {
      throw new RangeError('retry backoff must be non-negative, and maxBackoffMs >= initialBackoffMs');
    }
  }

  /** The pause after failed attempt number `attempt` (1-based). */
  backoffMs(attempt: number): number {
    return Math.min(this.initialBackoffMs * 2 ** Math.min(attempt - 1, 20), this.maxBackoffMs);
  }
}

/**
 * How long one attempt of an idempotent unary call other than Acquire waits for its answer: half
 * the call timeout, and never past the call's own deadline. (An Acquire's attempt carries the wait
 * it sends plus the call timeout, its timeouts counted by the retry policy.)
 *
 * A replica that went silent (a frozen host, a partition: its connection stays open) answers
 * nothing and refuses nothing, so an attempt sent there would wait out the whole call. The client
 * cannot tell it from a slow replica except by time, and most calls have no ttl to derive a bound
 * from (Describe, Leader, ForceRelease), so the bound comes from the call timeout: half of it
 * leaves the retry, on another replica, as long as the first attempt had, and is far above what a
 * healthy replica takes (one Redis round). An attempt that times out so is retried at once (its
 * wait paced it), with the same token, until the call's deadline (see {@link unaryRetryWaitMs}).
 */
export function attemptTimeoutMs(callTimeoutMs: number): number {
  return callTimeoutMs / 2;
}

/**
 * Whether, and after how long, a failed unary call is tried again: one decision for every
 * idempotent unary call (Release, Extend, Leader, Acquire with the client's own token, and the
 * fire-and-forget Releases). Returns the wait in ms, or undefined: do not retry.
 *
 * UNAVAILABLE is retried until the call's own deadline (`deadline`, on the client's clock: the
 * call timeout from the first attempt; for an Acquire, its wait on top), not for a fixed number
 * of attempts: a replica that restarts is refused for as long as it takes to come back, longer
 * than four quick attempts. Each retry waits the policy's backoff after attempt `attempt`, or the
 * server's pushback with jitter (rule 17; `DO_NOT_RETRY` stops); a wait that would end past the
 * deadline is not begun. DEADLINE_EXCEEDED is retried here only for an Acquire (`timeouts`: how
 * many of its attempts ended so), for the policy's attempts: each attempt carries its wait, so
 * time cannot bound it. (An attempt of another call cut by {@link attemptTimeoutMs} is retried by
 * the transport, at once.) A policy of one attempt retries nothing.
 */
export function unaryRetryWaitMs(code: number, pushbackMs: number | undefined, attempt: number,
  policy: RetryPolicy, nowMs: number, deadlineMs: number, timeouts?: number): number | undefined {
  if (policy.maxAttempts <= 1) {
    return undefined;
  }
  const wait = retryWaitMs(pushbackMs, policy.backoffMs(attempt));
  if (wait === undefined) {
    return undefined;
  }
  if (code === status.UNAVAILABLE) {
    return nowMs + wait < deadlineMs ? wait : undefined;
  }
  if (code === status.DEADLINE_EXCEEDED && timeouts !== undefined) {
    return timeouts < policy.maxAttempts ? wait : undefined;
  }
  return undefined;
}
