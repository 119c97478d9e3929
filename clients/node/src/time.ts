import { performance } from 'node:perf_hooks';
import type { Duration } from './proto/google/protobuf/Duration';

/** The client's monotonic clock, in milliseconds (performance.now()). */
export function now(): number {
  return performance.now();
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
