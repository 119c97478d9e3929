/**
 * How UNAVAILABLE (and, for Acquire, DEADLINE_EXCEEDED) is retried: the same call with the
 * same token, so a retry can never take a second lock. Backoff doubles from
 * `initialBackoffMs` up to `maxBackoffMs`.
 */
export interface RetryOptions {
  /** Attempts in all, the first included (default 4). */
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
