// One channel to redlockd and the unary calls over it: deadlines, retries of UNAVAILABLE,
// errors as LockServiceError. Internal to the package.
import * as grpc from '@grpc/grpc-js';
import { abortedError, errorFromStatus } from './errors';
import type { LockServiceClient } from './proto/redlock/v1/LockService';
import { pushbackOf, retryWaitMs } from './pushback';
import type { RetryPolicy } from './retry';
import { sleep } from './time';

/** How one call ended: its answer, or its status (and the server's pushback, rule 17). */
export type Outcome<T> = { ok: true; value: T }
  | { ok: false; code: number; details: string; pushbackMs?: number };

/** Starts one unary call on the stub with the given options. */
export type Invoke<T> = (
  stub: LockServiceClient,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<T>,
) => grpc.ClientUnaryCall;

export class Transport {
  constructor(
    readonly stub: LockServiceClient,
    readonly callTimeoutMs: number,
    readonly retry: RetryPolicy,
  ) {}

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
            ok: false, code: err.code ?? grpc.status.UNKNOWN, details: err.details ?? err.message,
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
   * A unary call with the call timeout; UNAVAILABLE is retried by the policy while
   * `stillWorthIt()` holds. Rejects with a LockServiceError naming `resource`; with a CANCELLED
   * one (the signal's reason as cause) when `signal` aborts it, which cancels the call under way.
   */
  async call<T>(invoke: Invoke<T>, resource: string,
    opts: { stillWorthIt?: () => boolean; signal?: AbortSignal; what?: string } = {}): Promise<T> {
    const { signal } = opts;
    const stillWorthIt = opts.stillWorthIt ?? (() => true);
    const aborted = () => abortedError(opts.what ?? `the call about '${resource}'`, resource, signal);
    if (signal?.aborted) {
      throw aborted();
    }
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.once(invoke, this.callTimeoutMs, signal);
      if (signal?.aborted) {
        throw aborted();
      }
      if (outcome.ok) {
        return outcome.value;
      }
      const wait = retryWaitMs(outcome.pushbackMs, this.retry.backoffMs(attempt));
      if (outcome.code !== grpc.status.UNAVAILABLE || attempt >= this.retry.maxAttempts || wait === undefined
        || !stillWorthIt()) {
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
   * back every permit of a large semaphore is no burst.
   */
  releaseQuietly(resource: string, token: string, permits: readonly number[] = [0]): void {
    void (async () => {
      for (const permit of permits) {
        // A closed channel throws as the call starts: nothing to do then.
        await this.once((stub, options, callback) => stub.Release({ resource, token, permit }, options, callback),
          this.callTimeoutMs);
      }
    })().catch(() => {});
  }
}
