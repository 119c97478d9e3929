// Leader election on ElectionService: the Campaign stream of one candidacy, the Leadership it
// yields, and Observe streams that follow an election across reconnects.
//
// A leadership is a kept lease under another name, on the same machinery (kept.ts): its
// deadline is the send time of the request whose sequence an answer echoes plus the answer's
// validity, moved only forward; it counts as held until a guard before that deadline; a
// Campaign stream that breaks or ends UNAVAILABLE is opened again with the candidate's token
// (and `resume` once leading), and the stream ending NOT_FOUND (or another final status, or OK
// without a resign), or the guarded deadline passing, is a loss reported once.
import { inspect, type InspectOptions } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { LeaseLostError, LockServiceError, abortable, abortedError } from './errors';
import type { Connection } from './connection';
import { KeptStream, Lifetime, silenceMs, waitingForReady, type LostCallback, type StreamEnd } from './kept';
import type { CampaignRequest } from './proto/redlock/v1/CampaignRequest';
import type { CampaignResponse__Output } from './proto/redlock/v1/CampaignResponse';
import type { Leadership__Output } from './proto/redlock/v1/Leadership';
import type { ObserveResponse__Output } from './proto/redlock/v1/ObserveResponse';
import { pushbackOf, retryWaitMs } from './pushback';
import type { RetryPolicy } from './retry';
import { answerProcessed, fromDuration, toDuration } from './time';
import { newToken } from './token';

const Status = grpc.status;

/** Who leads an election: the leader's value and its term (a uint64, as a bigint, like a fencing token). */
export interface Leader {
  value: string;
  term: bigint;
}

export interface CampaignOptions {
  /** The leadership's time to live; the client renews it every ttl/4 while it leads. */
  ttlMs: number;
  /** How long to wait for the leadership (default: as long as it takes). */
  waitMs?: number;
  /** Aborting withdraws the candidacy (a leadership granted in that instant is resigned). */
  signal?: AbortSignal;
}

/** A value longer than this is INVALID_ARGUMENT, and the server would end the leadership for it. */
const MAX_VALUE_BYTES = 256;

/** @internal What a Campaign stream tells its owner. */
export interface CampaignListener {
  /** An answer whose sequence this candidacy sent, with that request's send time. */
  answered(response: CampaignResponse__Output, sentAt: number): void;
  /** The stream ended for good without the owner having closed it. */
  ended(end: StreamEnd): void;
  /** A leader's stream broke: open another? (A waiting candidate's is decided here.) */
  resumable(): boolean;
}

/**
 * @internal The client end of one candidacy, on as many Campaign streams as it takes: the
 * first request at once, then one every ttl/4 with a rising sequence (while waiting too), each
 * carrying the candidate's own token and the value wanted now. A stream that breaks or ends
 * UNAVAILABLE is opened again with the same token: with `resume` when the candidate leads (the
 * server renews the leadership, same term, never queues), without while it still waits (the
 * server leads it at once, same term, if the token was granted meanwhile). A waiting candidate
 * gives up after the retry policy's attempts of streams that each ended within ttl/4.
 */
export class CampaignStream {
  listener: CampaignListener;
  /** Set once the candidate leads: a reopened stream then asks to resume. */
  leading = false;
  readonly #kept: KeptStream<CampaignRequest, CampaignResponse__Output>;
  readonly #token = newToken();
  readonly #retry: RetryPolicy;
  readonly #periodMs: number;
  #value: string;
  #shortEnds = 0;

  constructor(connection: Connection, election: string, value: string, ttlMs: number, retry: RetryPolicy,
    listener: CampaignListener) {
    this.listener = listener;
    this.#value = value;
    this.#retry = retry;
    this.#periodMs = Math.max(1, ttlMs / 4);
    const ttl = toDuration(ttlMs);
    this.#kept = new KeptStream<CampaignRequest, CampaignResponse__Output>({
      what: `Campaign stream of election '${election}'`,
      open: () => (this.leading ? connection.elections.Campaign(waitingForReady()) : connection.elections.Campaign()),
      request: (first) => ({ election, value: this.#value, ttl, token: this.#token, resume: first && this.leading }),
      sequenceOf: (response) => response.sequence,
      periodMs: this.#periodMs,
      retry,
      // A candidate still waiting gets no answers until it leads: it has none to miss.
      silenceMs: () => (this.leading ? silenceMs(ttlMs) : undefined),
      connection,
      shared: connection.answerTimes,
    }, {
      answered: (response, sentAt) => this.listener.answered(response, sentAt),
      ended: (end) => this.listener.ended(end),
      resumable: (_end, livedMs) => (this.leading ? this.listener.resumable() : this.#candidateResumes(livedMs)),
    });
  }

  /** How many Campaign streams this candidacy opened (1 + the reopens). */
  get streams(): number {
    return this.#kept.streams;
  }

  #candidateResumes(livedMs: number): boolean {
    if (livedMs >= this.#periodMs) {
      this.#shortEnds = 0; // it worked for a while (a replica went away): not a server refusing streams
    }
    this.#shortEnds++;
    return this.#shortEnds < this.#retry.maxAttempts;
  }

  /** Sends the candidacy's value now (and with every later request; a reopened stream's first). */
  proclaim(value: string): void {
    this.#value = value;
    this.#kept.send();
  }

  /** Half-closes: the server resigns (or withdraws) and ends the stream OK; resolves with how it ended. */
  halfClose(): Promise<StreamEnd> {
    return this.#kept.halfClose();
  }

  /** Stops the stream without waiting for it (grpc-js may half-close first: the server then resigns). */
  cancel(): void {
    this.#kept.cancel();
  }

  /** Half-closes and waits up to `timeoutMs` for the end; cancels and reports DEADLINE_EXCEEDED after that. */
  close(timeoutMs: number): Promise<StreamEnd> {
    return this.#kept.close(timeoutMs);
  }
}

/** @internal Rejects a value the server would refuse (and end the leadership for). */
export function checkValue(election: string, value: string): void {
  if (typeof value !== 'string') {
    throw new TypeError('value must be a string');
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_VALUE_BYTES) {
    throw new LockServiceError(Status.INVALID_ARGUMENT,
      `election '${election}': a value may have at most ${MAX_VALUE_BYTES} UTF-8 bytes`, election);
  }
}

interface ProclaimWaiter {
  value: string;
  resolve(): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The caller's leadership of an election, from {@link LockClient.campaign}. Renewed on its
 * Campaign stream (a request every ttl/4) until it is resigned or lost; a stream that breaks
 * or ends UNAVAILABLE (a replica shutting down) is opened again with the candidate's token and
 * `resume`, on any replica, and the leadership goes on with the same term if a renewal lands
 * before its guarded deadline.
 *
 * It counts as leading until a guard before its local deadline (ttl/20, at most 100 ms), and is
 * reported lost then unless a renewal moved that deadline: a timer that runs a little late still
 * tells the leader before another candidate can be elected.
 */
export class Leadership {
  /** The name of the election. */
  readonly election: string;
  /** The ttl the leadership is renewed with, in ms. */
  readonly ttlMs: number;

  readonly #stream: CampaignStream;
  readonly #callTimeoutMs: number;
  readonly #waiters = new Set<ProclaimWaiter>();
  readonly #lifetime: Lifetime;
  #term: bigint;
  #value: string;

  /** @internal Leaderships come from LockClient.campaign, with the stream's first answer. */
  constructor(stream: CampaignStream, election: string, ttlMs: number, callTimeoutMs: number,
    first: CampaignResponse__Output, sentAt: number) {
    this.#stream = stream;
    this.election = election;
    this.ttlMs = ttlMs;
    this.#callTimeoutMs = callTimeoutMs;
    this.#term = BigInt(first.term);
    this.#value = first.value;
    this.#lifetime = new Lifetime(`leadership of election '${election}'`, election, ttlMs,
      sentAt + fromDuration(first.validity), (error) => {
        stream.cancel();
        this.#failWaiters(error);
      });
    stream.leading = true;
    stream.listener = {
      answered: (response, at) => this.#answered(response, at),
      ended: (end) => {
        if (end.code === Status.OK) {
          this.#lifetime.lose(Status.UNAVAILABLE, `the Campaign stream of election '${election}' ended unexpectedly`);
        } else {
          this.#lifetime.lose(end.code, end.details);
        }
      },
      // Until the guarded deadline passes (the lifetime's timer then reports the loss).
      resumable: () => this.#lifetime.open,
    };
  }

  /**
   * The term: the leadership's fencing token (a uint64, as a bigint like a lease's fencing
   * token). It strictly increases per election across leaders; pass it with every write the
   * leader makes.
   */
  get term(): bigint {
    return this.#term;
  }

  /** The value everyone sees for this leader now (the last one an answer showed). */
  get value(): string {
    return this.#value;
  }

  /**
   * The local deadline on `performance.now()`: the send time of the request the last renewal
   * answered, plus the validity it returned. The leadership stops counting a guard before it.
   */
  get deadline(): number {
    return this.#lifetime.deadline;
  }

  /** Milliseconds left while leading (up to the guard before the deadline); 0 once not leading. */
  get remainingMs(): number {
    return this.#lifetime.remainingMs;
  }

  /** Aborted when the leadership is lost, with the LeaseLostError as its reason. */
  get signal(): AbortSignal {
    return this.#lifetime.signal;
  }

  /** Why the leadership was lost, once it is. */
  get lostError(): LeaseLostError | undefined {
    return this.#lifetime.lostError;
  }

  /**
   * True until the guard before the local deadline is reached, the leadership is lost, or it is
   * resigned. A getter, like a lease's `valid`: every state read of a handle is a property.
   */
  get isLeader(): boolean {
    return this.#lifetime.valid;
  }

  /**
   * Makes `value` the value everyone sees, keeping the term. Resolves once an answer shows it;
   * rejects with LeaseLostError when the leadership is lost (or resigned) first, with a
   * DEADLINE_EXCEEDED LockServiceError when no answer showed it within the call timeout, and
   * with a CANCELLED one when `signal` aborts first (the value was sent all the same: it stays
   * the one the renewals carry).
   */
  proclaim(value: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    try {
      checkValue(this.election, value);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.#lifetime.ended) {
      return Promise.reject(this.#resignedError());
    }
    if (this.#lifetime.lostError !== undefined) {
      return Promise.reject(this.#lifetime.lostError);
    }
    const { signal } = opts;
    const aborted = () => abortedError(`proclaim in election '${this.election}'`, this.election, signal);
    if (signal?.aborted) {
      return Promise.reject(aborted());
    }
    let sent: ProclaimWaiter | undefined;
    return abortable(new Promise<void>((resolve, reject) => {
      const waiter: ProclaimWaiter = {
        value,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new LockServiceError(Status.DEADLINE_EXCEEDED, `election '${this.election}': no answer showed `
            + `the proclaimed value within ${this.#callTimeoutMs} ms`, this.election));
        }, this.#callTimeoutMs),
      };
      sent = waiter;
      this.#waiters.add(waiter);
      this.#stream.proclaim(value);
    }), signal, aborted, () => {
      if (sent !== undefined && this.#waiters.delete(sent)) {
        clearTimeout(sent.timer);
      }
    });
  }

  /**
   * Resigns: half-closes the stream and waits for its end (up to the call timeout). True only on
   * the first call, and only when the stream ended OK. No loss is reported afterwards. While the
   * stream is down (being reopened), a new one resumes the leadership and half-closes at once.
   * When `signal` aborts first it rejects with a CANCELLED LockServiceError: the leadership
   * counts as resigned here all the same (the server resigns it when the half-close reaches it,
   * or it runs out).
   */
  async resign(opts: { signal?: AbortSignal } = {}): Promise<boolean> {
    const { signal } = opts;
    const held = this.#lifetime.open;
    if (!this.#lifetime.end()) {
      return false;
    }
    this.#failWaiters(this.#resignedError());
    if (!held) {
      return false;
    }
    const end = await abortable(this.#stream.close(this.#callTimeoutMs), signal,
      () => abortedError(`resign in election '${this.election}'`, this.election, signal));
    return end.code === Status.OK;
  }

  /** Resigns and ignores failures (the leadership runs out by itself): for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.resign();
    } catch {
      // Lost or unreachable: the leadership runs out anyway.
    }
  }

  /** Calls `callback` once when the leadership is lost; at once if it already is. Never after a resign. */
  onLost(callback: LostCallback): this {
    this.#lifetime.onLost(callback);
    return this;
  }

  #answered(response: CampaignResponse__Output, sentAt: number): void {
    if (!this.#lifetime.open) {
      return;
    }
    // After a fault a renewal may carry a higher fencing token: the term moves with it.
    const term = BigInt(response.term);
    if (term > this.#term) {
      this.#term = term;
    }
    this.#value = response.value;
    this.#lifetime.renewed(sentAt + fromDuration(response.validity));
    for (const waiter of [...this.#waiters]) {
      if (waiter.value === response.value) {
        this.#waiters.delete(waiter);
        clearTimeout(waiter.timer);
        waiter.resolve();
      }
    }
  }

  #resignedError(): LeaseLostError {
    return new LeaseLostError(Status.FAILED_PRECONDITION, `leadership of election '${this.election}' was resigned`,
      this.election);
  }

  #failWaiters(error: Error): void {
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.#waiters.clear();
  }

  toString(): string {
    return `Leadership[election=${this.election}, term=${this.term}, value=${this.value}, `
      + `leader=${this.isLeader}]`;
  }

  /** JSON has no bigint: the term is a decimal string there. */
  toJSON(): { election: string; term: string; value: string; isLeader: boolean } {
    return { election: this.election, term: this.term.toString(), value: this.value, isLeader: this.isLeader };
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `Leadership ${inspect(this.toJSON(), options)}`;
  }
}

/** @internal A Leadership message as a Leader (null when absent). */
export function leaderOf(leadership: Leadership__Output | null | undefined): Leader | null {
  return leadership == null ? null : { value: leadership.value, term: BigInt(leadership.term) };
}

function sameState(a: Leader | null, b: Leader | null): boolean {
  return a === null || b === null ? a === b : a.value === b.value && a.term === b.term;
}

/** States a reader may fall behind by; past that the oldest undelivered one is dropped. */
const MAX_QUEUED = 64;

/**
 * Follows an election, from {@link LockClient.observe}: an async iterable of its leader states,
 * the current one (a {@link Leader}, or null when it has none) first, then every change. When
 * the stream ends without `close()`, it is opened again (backoff as the client's retry policy,
 * without a limit of attempts), and only a state that differs from the last one passed on, with
 * a term not below the highest seen, is passed on. Iteration ends when the observation is
 * closed: `close()`, the signal given to `observe` aborting, or the loop leaving early (`break`,
 * `return`, a throw). One reader: a second loop over the same observation shares its states.
 * A reader that falls more than 64 states behind skips the oldest ones.
 */
export class Observation implements AsyncIterableIterator<Leader | null> {
  /** The name of the election. */
  readonly election: string;

  readonly #connection: Connection;
  readonly #retry: RetryPolicy;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => this.close();
  readonly #queue: (Leader | null)[] = [];
  readonly #readers: ((result: IteratorResult<Leader | null>) => void)[] = [];
  #call: grpc.ClientReadableStream<ObserveResponse__Output> | undefined;
  #reopen: NodeJS.Timeout | undefined;
  #failures = 0;
  #closed = false;
  #passed = false;
  #last: Leader | null = null;
  #highestTerm: bigint | undefined;

  /** @internal Observations come from LockClient.observe. */
  constructor(connection: Connection, election: string, retry: RetryPolicy, signal?: AbortSignal) {
    this.election = election;
    this.#connection = connection;
    this.#retry = retry;
    this.#signal = signal;
    if (signal?.aborted) {
      this.#closed = true;
      return;
    }
    this.#call = this.#observe(); // a closed client throws here
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Whether it is closed (close(), the signal, or the end of a loop over it). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Stops observing: the stream is cancelled, and iteration ends (states not yet read are dropped). */
  close(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    if (this.#reopen !== undefined) {
      clearTimeout(this.#reopen);
      this.#reopen = undefined;
    }
    const call = this.#call;
    this.#call = undefined;
    call?.cancel();
    this.#queue.length = 0;
    for (const reader of this.#readers.splice(0)) {
      reader({ done: true, value: undefined });
    }
  }

  /** The next state; waits for a change. Done once closed. */
  next(): Promise<IteratorResult<Leader | null>> {
    if (this.#queue.length > 0) {
      return Promise.resolve({ done: false, value: this.#queue.shift() as Leader | null });
    }
    if (this.#closed) {
      return Promise.resolve({ done: true, value: undefined });
    }
    return new Promise((resolve) => this.#readers.push(resolve));
  }

  /** Called when a loop over it ends early: closes it. */
  return(): Promise<IteratorResult<Leader | null>> {
    this.close();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #reopenStream(): void {
    this.#reopen = undefined;
    if (this.#closed) {
      return;
    }
    try {
      this.#call = this.#observe();
    } catch {
      // The client was closed (its channel is shut down): nothing will come any more.
      this.close();
    }
  }

  #observe(): grpc.ClientReadableStream<ObserveResponse__Output> {
    const call = this.#connection.elections.Observe({ election: this.election });
    const what = `Observe stream of election '${this.election}'`;
    call.on('data', (response: ObserveResponse__Output) => {
      try {
        if (this.#call === call) {
          this.#failures = 0;
          this.#pass(leaderOf(response.leader));
        }
      } finally {
        answerProcessed(what, response);
      }
    });
    call.on('error', () => {}); // every end also comes as 'status'
    call.on('status', (status: grpc.StatusObject) => {
      if (this.#closed || this.#call !== call) {
        return;
      }
      this.#call = undefined;
      this.#failures++;
      // The server's pushback (rule 17) replaces the backoff; with no limit and nobody to
      // fail, "do not retry" is the longest backoff.
      const wait = retryWaitMs(pushbackOf(status.metadata), this.#retry.backoffMs(this.#failures))
        ?? this.#retry.maxBackoffMs;
      this.#reopen = setTimeout(() => this.#reopenStream(), wait);
    });
    return call;
  }

  #pass(state: Leader | null): void {
    if (this.#closed) {
      return;
    }
    if (state !== null) {
      if (this.#highestTerm !== undefined && state.term < this.#highestTerm) {
        return; // an older leader than one already seen (a lagging replica after a reconnect)
      }
      this.#highestTerm = state.term;
    }
    if (this.#passed && sameState(this.#last, state)) {
      return;
    }
    this.#passed = true;
    this.#last = state;
    const reader = this.#readers.shift();
    if (reader !== undefined) {
      reader({ done: false, value: state === null ? null : { ...state } });
      return;
    }
    this.#queue.push(state === null ? null : { ...state });
    if (this.#queue.length > MAX_QUEUED) {
      this.#queue.shift();
    }
  }

  toString(): string {
    return `Observation[election=${this.election}, closed=${this.#closed}]`;
  }
}

/**
 * @internal The callback form of observe: a loop over the observation that calls `callback`
 * with each state. No callback runs once `close()` returned (also when called from a callback).
 */
export function deliverTo(observation: Observation, callback: (leader: Leader | null) => void): Observation {
  void (async () => {
    for await (const leader of observation) {
      if (observation.closed) {
        return;
      }
      try {
        callback(leader);
      } catch (e) {
        process.emitWarning(`an observer of election '${observation.election}' threw: ${String(e)}`);
      }
    }
  })();
  return observation;
}
