// The unary calls over the client's connection: deadlines, retries of UNAVAILABLE and of
// attempts that met a silent replica until the call's own deadline, errors as LockServiceError.
// Internal to the package.
import * as grpc from '@grpc/grpc-js';
import type { Connection } from './connection';
import { abortedError, errorFromStatus } from './errors';
import type { LockServiceClient } from './proto/redlock/v1/LockService';
import { pushbackOf } from './pushback';
import { attemptTimeoutMs, unaryRetryWaitMs, type RetryPolicy } from './retry';
import { now, sleep } from './time';

/** How one call ended: its answer, or its status (and the server's pushback, rule 17). */
export type Outcome<T> = { ok: true; value: T }
  | { ok: false; code: number; details: string; pushbackMs?: number };

/** Starts one unary call on the stub with the given options. */
export type Invoke<T> = (
  stub: LockServiceClient,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<T>,
) => grpc.ClientUnaryCall;

/**
 * The status of a failed call as this client reads it. A server whose copy of the deadline ran
 * out first resets the stream with CANCEL, and grpc-js reports that as CANCELLED when it reads
 * the reset before its own deadline timer has run (a busy event loop: seen in a CI run). gRPC's
 * HTTP/2 protocol note asks clients to check the deadline then, as grpc-java, grpc-go and gRPC
 * core do: a CANCELLED this client did not cause, at or after the deadline, is DEADLINE_EXCEEDED,
 * an answer that did not come in time, retried as one (an Acquire's same-token retry).
 */
export function statusSeen(code: number, deadlineMs: number, nowMs: number, cancelledHere: boolean): number {
  if (code === grpc.status.CANCELLED && !cancelledHere && nowMs >= deadlineMs) {
    return grpc.status.DEADLINE_EXCEEDED;
  }
  return code;
}

export class Transport {
  constructor(
    readonly connection: Connection,
    readonly callTimeoutMs: number,
    readonly retry: RetryPolicy,
  ) {}

  /** LockService on the connection's current channel. */
  get stub(): LockServiceClient {
    return this.connection.lock;
  }

  /**
   * One attempt with a deadline `timeoutMs` from now. Aborting the signal cancels the call
   * (it then ends CANCELLED). Never rejects.
   */
  once<T>(invoke: Invoke<T>, timeoutMs: number, signal?: AbortSignal): Promise<Outcome<T>> {
    return new Promise((resolve) => {
      const deadline = new Date(Date.now() + Math.max(0, timeoutMs));
      let onAbort: (() => void) | undefined;
      const call = invoke(this.stub, { deadline }, (err, value) => {
        if (onAbort !== undefined) {
          signal?.removeEventListener('abort', onAbort);
        }
        if (err) {
          resolve({
            ok: false,
            code: statusSeen(err.code ?? grpc.status.UNKNOWN, deadline.getTime(), Date.now(), signal?.aborted === true),
            details: err.details ?? err.message,
            pushbackMs: pushbackOf(err.metadata),
          });
        } else {
          resolve({ ok: true, value: value as T });
        }
      });
      if (signal !== undefined) {
        onAbort = () => call.cancel();
        if (signal.aborted) {
          call.cancel();
        } else {
          signal.addEventListener('abort', onAbort, { once: true });
        }
      }
    });
  }

  /**
   * A unary call that is over by `deadline` (on the client's clock; default: the call timeout
   * from now); UNAVAILABLE is retried until then (see unaryRetryWaitMs) while `stillWorthIt()`
   * holds, and so is an attempt that got no answer within its own timeout (attemptTimeoutMs).
   * Rejects with a LockServiceError naming `resource`; with a CANCELLED one (the signal's reason
   * as cause) when `signal` aborts it, which cancels the call under way.
   */
  async call<T>(invoke: Invoke<T>, resource: string,
    opts: { stillWorthIt?: () => boolean; signal?: AbortSignal; what?: string; deadline?: number } = {}): Promise<T> {
    const { signal } = opts;
    const stillWorthIt = opts.stillWorthIt ?? (() => true);
    const deadline = opts.deadline ?? now() + this.callTimeoutMs;
    const aborted = () => abortedError(opts.what ?? `the call about '${resource}'`, resource, signal);
    if (signal?.aborted) {
      throw aborted();
    }
    for (let attempt = 1; ; attempt++) {
      const left = deadline - now();
      const attemptMs = Math.min(left, attemptTimeoutMs(this.callTimeoutMs));
      const generation = this.connection.generation;
      const outcome = await this.once(invoke, attemptMs, signal);
      if (signal?.aborted) {
        throw aborted();
      }
      if (outcome.ok) {
        return outcome.value;
      }
      if (outcome.code === grpc.status.DEADLINE_EXCEEDED && attemptMs < left) {
        // Cut by its own timeout, not the call's: its replica may be silent (a frozen host, a
        // partition). The retry goes over new connections, on which a replica whose handshake
        // cannot complete is not picked (connection.ts), at once: the timeout paced it.
        this.connection.renew(generation);
        if (this.retry.maxAttempts > 1 && stillWorthIt()) {
          continue;
        }
      }
      const wait = unaryRetryWaitMs(outcome.code, outcome.pushbackMs, attempt, this.retry, now(), deadline);
      if (wait === undefined || !stillWorthIt()) {
        throw errorFromStatus(outcome.code, outcome.details, resource);
      }
      try {
        await sleep(wait, signal);
      } catch {
        throw aborted();
      }
    }
  }

  /**
   * Fire and forget: a Release nobody waits for (the lease runs out by itself if it fails), one
   * per permit in `permits` (0: the lock), each sent when the one before it ended, so that giving
   * back every permit of a large semaphore is no burst. UNAVAILABLE is retried as any unary
   * call's (a replica going away must not keep the grant held while another could free it), all
   * of it within one call timeout from now.
   */
  releaseQuietly(resource: string, token: string, permits: readonly number[] = [0]): void {
    const deadline = now() + this.callTimeoutMs;
    void (async () => {
      for (const permit of permits) {
        try {
          await this.call((stub, options, callback) => stub.Release({ resource, token, permit }, options, callback),
            resource, { deadline });
        } catch {
          // Not reachable in time (or the channel is closed): the lease runs out by itself.
        }
      }
    })();
  }
}
