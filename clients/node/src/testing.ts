// Test-only seams (not part of the package's API, not exported by index.ts): a clock a test
// moves by hand, and a hook to wait until the client has processed an answer, so that a test
// asserts on what happened instead of sleeping and asserting on what did not.
import { transportOf, type LockClient } from './client';
import type { DescribeResponse__Output } from './proto/redlock/v1/DescribeResponse';
import { seams, systemClock, type Clock, type ClockTimer } from './time';

interface ManualTimer extends ClockTimer {
  at: number;
  order: number;
  callback: () => void;
}

/**
 * A monotonic clock that stands still until `advance` moves it; the timers it started (the
 * loss of a grant at its guarded deadline) run as it passes them, in order.
 */
export class ManualClock implements Clock {
  #now: number;
  #order = 0;
  readonly #timers = new Set<ManualTimer>();

  /** Starts at a whole number of ms, so that sums of whole or half ms (deadlines, guards) stay exact. */
  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): ClockTimer {
    const timer: ManualTimer = { at: this.#now + Math.max(0, ms), order: this.#order++, callback, unref: () => timer };
    this.#timers.add(timer);
    return timer;
  }

  clearTimeout(timer: ClockTimer): void {
    this.#timers.delete(timer as ManualTimer);
  }

  /** Timers still to run. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves the clock `ms` forward, running each timer due on the way at its time. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      let next: ManualTimer | undefined;
      for (const timer of this.#timers) {
        if (timer.at <= until && (next === undefined || timer.at < next.at
          || (timer.at === next.at && timer.order < next.order))) {
          next = timer;
        }
      }
      if (next === undefined) {
        break;
      }
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.at);
      next.callback();
    }
    this.#now = until;
  }

  /** Moves the clock to `at` (never back). */
  advanceTo(at: number): void {
    this.advance(Math.max(0, at - this.#now));
  }
}

/** Puts `clock` in place of the system's; the function returned puts the system's back. */
export function useClock(clock: Clock): () => void {
  seams.clock = clock;
  return () => {
    seams.clock = systemClock;
  };
}

/**
 * Calls `hook(stream, response)` after the client processed each answer of a KeepAlive,
 * Campaign or Observe stream (used or ignored); `stream` names it, e.g. "Campaign stream of
 * election 'jobs'". The function returned removes the hook.
 */
export function onAnswerProcessed(hook: (stream: string, response: unknown) => void): () => void {
  seams.answerProcessed = hook;
  return () => {
    seams.answerProcessed = undefined;
  };
}

/**
 * A Describe of `resource` through `client`'s own path for idempotent unary calls (its current
 * connection, the call timeout, UNAVAILABLE retried until then): for the conformance runner,
 * since the client has no Describe of its own. Resolves with whether a quorum holds it.
 */
export async function describeHeld(client: LockClient, resource: string): Promise<boolean> {
  const response = await transportOf(client).call<DescribeResponse__Output>(
    (stub, options, callback) => stub.Describe({ resource }, options, callback), resource,
    { what: `describe of resource '${resource}'` });
  return response.held;
}
