import { performance } from 'node:perf_hooks';
import type { Duration } from './proto/google/protobuf/Duration';

/** A timer the clock started: `unref()` lets the process exit while it is pending. */
export interface ClockTimer {
  unref(): unknown;
}

/**
 * @internal The monotonic clock every deadline is kept on, and the timer that reports a loss
 * when a guarded deadline passes. The system's is performance.now() and setTimeout; a test
 * puts its own in place (dist/testing.js) to move time by hand.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/**
 * @internal Test-only seams: the clock in use, and a hook that runs after the client has
 * processed each answer of a kept stream (KeepAlive, Campaign) or an Observe stream, whether the
 * answer moved anything or was ignored. A test waits for it instead of sleeping.
 */
export const seams: {
  clock: Clock;
  answerProcessed: ((stream: string, response: unknown) => void) | undefined;
} = { clock: systemClock, answerProcessed: undefined };

/** The client's monotonic clock, in milliseconds (performance.now() unless a test set another). */
export function now(): number {
  return seams.clock.now();
}

/** @internal Tells a test's hook that an answer of `stream` was processed. */
export function answerProcessed(stream: string, response: unknown): void {
  const hook = seams.answerProcessed;
  if (hook !== undefined) {
    try {
      hook(stream, response);
    } catch {
      // A test's hook may not break the client.
    }
  }
}

/** Milliseconds as a google.protobuf.Duration (seconds and nanos of the same sign). */
export function toDuration(ms: number): Duration {
  const negative = ms < 0;
  const totalNanos = BigInt(Math.round(Math.abs(ms) * 1e6));
  const seconds = totalNanos / 1_000_000_000n;
  const nanos = Number(totalNanos % 1_000_000_000n);
  return negative
    ? { seconds: (-seconds).toString(), nanos: -nanos }
    : { seconds: seconds.toString(), nanos };
}

/** A google.protobuf.Duration (as proto-loader gives it, seconds a string) in milliseconds. */
export function fromDuration(d: { seconds: string | number; nanos: number } | null | undefined): number {
  if (d == null) {
    return 0;
  }
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

/** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
