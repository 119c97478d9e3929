// The server's early refusal (conformance rule 17): UNAVAILABLE with the trailer
// `grpc-retry-pushback-ms` (gRPC's retry design) says how long to stay away before trying
// again, or, negative or unparsable, not to try again at all. Waiting at least that long, with
// jitter, lets a swamped server (every holder of a restarted replica coming back at once)
// recover instead of being hit again by the same crowd at the same instant. Internal.
import type * as grpc from '@grpc/grpc-js';

export const PUSHBACK_KEY = 'grpc-retry-pushback-ms';

/** What `pushbackOf` returns for a negative or unparsable value: do not retry. */
export const DO_NOT_RETRY = -1;

/** A trailer's value: non-negative decimal milliseconds, else DO_NOT_RETRY. */
export function parsePushback(value: string | Buffer): number {
  const text = String(value).trim();
  if (!/^[0-9]{1,15}$/.test(text)) {
    return DO_NOT_RETRY; // negative, fractional, huge or garbage: the server's "do not retry"
  }
  return Number(text);
}

/** The pushback a call's trailers carry in milliseconds, DO_NOT_RETRY, or undefined for none. */
export function pushbackOf(trailers: grpc.Metadata | undefined): number | undefined {
  const values = trailers?.get(PUSHBACK_KEY) ?? [];
  return values.length === 0 ? undefined : parsePushback(values[0]);
}

/** The wait before the retry: a random time between the pushback and 1.5 times it. */
export function jittered(pushbackMs: number): number {
  return pushbackMs * (1 + Math.random() / 2);
}

/**
 * The wait after failed attempt `attempt` whose end carried `pushbackMs`: the pushback with
 * jitter if there is one, else `backoffMs`; undefined for "do not retry".
 */
export function retryWaitMs(pushbackMs: number | undefined, backoffMs: number): number | undefined {
  if (pushbackMs === undefined) {
    return backoffMs;
  }
  return pushbackMs === DO_NOT_RETRY ? undefined : jittered(pushbackMs);
}
