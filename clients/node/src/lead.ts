// Run while leader (LockClient.lead): campaign, run the work with a signal aborted the moment
// the leadership is lost, resign when the work is done; on a loss, fail or (requeue) campaign
// again. Curator's LeaderSelector loop, once, here.
import { LeaseLostError, LockServiceError, abortedError } from './errors';
import type { Leadership } from './election';

export interface LeadOptions {
  /** The leadership's time to live; renewed every ttl/4 while leading. */
  ttlMs: number;
  /** After a loss, campaign again and run the work again (default false: reject with the loss). */
  requeue?: boolean;
  /** Aborting withdraws the candidacy, or aborts the work's signal and resigns once the work settled. */
  signal?: AbortSignal;
}

/**
 * The work `lead` runs while leading. `signal` is aborted the moment the leadership is lost
 * (reason: the LeaseLostError), or when the caller aborts `lead` (reason: a CANCELLED
 * LockServiceError); stop touching what the leadership guards then.
 */
export type LeadWork<T> = (leadership: Leadership, signal: AbortSignal) => Promise<T> | T;

/** How one term of leading ended. */
type Term<T> = { done: true; result: T } | { done: false; lost: LeaseLostError };

/** @internal LockClient.lead: terms of leading until one ends other than by a requeued loss. */
export async function leadUntilDone<T>(election: string,
  campaign: (signal: AbortSignal | undefined) => Promise<Leadership>, work: LeadWork<T>, requeue: boolean,
  signal: AbortSignal | undefined): Promise<T> {
  const cancelled = () => abortedError(`lead in election '${election}'`, election, signal);
  for (;;) {
    if (signal?.aborted) {
      throw cancelled();
    }
    let leadership: Leadership;
    try {
      leadership = await campaign(signal);
    } catch (e) {
      if (signal?.aborted) {
        throw cancelled();
      }
      throw e;
    }
    const term = await leadOnce(leadership, work, signal, cancelled);
    if (term.done) {
      return term.result;
    }
    if (!requeue) {
      throw term.lost;
    }
  }
}

/** One term: runs the work, then resigns, or reports the loss. */
async function leadOnce<T>(leadership: Leadership, work: LeadWork<T>, signal: AbortSignal | undefined,
  cancelled: () => LockServiceError): Promise<Term<T>> {
  const told = new AbortController();
  // Lifetime.lose aborts leadership.signal and runs the loss callbacks in the same turn: the
  // work hears of a loss the moment it is reported, before the guarded deadline.
  leadership.onLost((error) => told.abort(error));
  const onAbort = () => told.abort(cancelled());
  if (signal?.aborted) {
    onAbort();
  } else {
    signal?.addEventListener('abort', onAbort, { once: true });
  }
  let result: T | undefined;
  let failure: { error: unknown } | undefined;
  try {
    result = await work(leadership, told.signal);
  } catch (error) {
    failure = { error };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (signal?.aborted) {
    await resignQuietly(leadership);
    throw cancelled();
  }
  const lost = leadership.lostError;
  if (lost !== undefined) {
    if (failure !== undefined && !causedBy(failure.error, told.signal)) {
      // An error of the work's own, with the leadership gone too: never requeued.
      throw new LeaseLostError(lost.code, lost.details, lost.resource, { cause: failure.error });
    }
    return { done: false, lost };
  }
  await resignQuietly(leadership);
  if (failure !== undefined) {
    throw failure.error;
  }
  return { done: true, result: result as T };
}

/** Whether the work threw because its signal told it to stop (the reason itself, or an AbortError). */
function causedBy(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted && (error === signal.reason || (error instanceof Error && error.name === 'AbortError'));
}

async function resignQuietly(leadership: Leadership): Promise<void> {
  try {
    await leadership.resign();
  } catch {
    // Unreachable: the leadership runs out by itself.
  }
}
