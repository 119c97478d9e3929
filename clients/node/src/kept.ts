// The one machinery behind every kept grant, a kept lease (KeepAlive) and a leadership
// (Campaign) alike:
//
// - Lifetime: how long the grant may be relied on. Its local deadline on the monotonic clock,
//   the guard before it, the loss reported once (callbacks, an AbortSignal), and the timer that
//   reports the loss when the guarded deadline passes without a renewal.
// - KeptStream: the stream that renews it. A request at once and then every ttl/4 with a
//   sequence that keeps rising across streams; an answer is dated by the send time of the
//   request whose sequence it echoes. A stream that ends with a status that does not say the
//   grant is gone (UNAVAILABLE when a replica shuts down, any error of a broken connection) is
//   opened again on the same channel, with the same first request, backing off with jitter,
//   until its owner says it is not worth it any more (for a grant: the guarded deadline passed).
//
//   A stream whose oldest unanswered request has waited the silence bound (ttl/4) is replaced:
//   its replica stopped (a frozen host, a partition) without closing anything, or is only slow
//   (a cold JVM, a starved CPU). The client's later calls go over new connections
//   (connection.ts) and a new stream is opened at once. The silent one sends nothing more but is
//   still read (a late answer counts, dated as any other), and is never cancelled while the grant
//   is held (grpc-js's cancel half-closes first, which the replica, once it wakes, would take for
//   a release): only when the grant is over (released, resigned, lost), when a half-close gives
//   back nothing still believed in. The new stream is held to a third of the bound until its
//   first answer (a second replica may be silent too), and every reopen after a silence goes at
//   once (each silence took its bound of time already).
//
// The server counts a renewal's validity from when it finished, and its answer may then spend
// any time on the way. So a deadline is counted from the send time of the request whose
// sequence the answer echoes: that renewal began after the request arrived, so this deadline
// is never later than the server's.
import * as grpc from '@grpc/grpc-js';
import { LeaseLostError } from './errors';
import { DO_NOT_RETRY, jittered, pushbackOf } from './pushback';
import type { RetryPolicy } from './retry';
import { answerProcessed, now, seams, type Clock, type ClockTimer } from './time';

const Status = grpc.status;

/** How long before its deadline a grant stops counting as valid: ttl/20, at most 100 ms. */
export function guardMs(ttlMs: number): number {
  return Math.min(ttlMs / 20, 100);
}

export type LostCallback = (error: LeaseLostError) => void;

/** How a stream ended. */
export interface StreamEnd {
  code: number;
  details: string;
  /** The server's pushback (rule 17), when it refused the stream with one. */
  pushbackMs?: number;
}

/**
 * Whether a kept stream that ends with `code` (without its owner asking) says the grant is
 * gone or the stream is refused for good: such an end is a loss, every other one is resumed.
 */
export function isFinalEnd(code: number): boolean {
  return code === Status.OK || code === Status.NOT_FOUND || code === Status.PERMISSION_DENIED
    || code === Status.UNAUTHENTICATED || code === Status.INVALID_ARGUMENT;
}

/**
 * How long a kept stream may leave its oldest unanswered request without an answer before it
 * counts as broken: ttl/4. A healthy replica answers each request after one Redis round, and the
 * next request goes out a period (ttl/4) later anyway; waiting for the guarded deadline instead
 * would lose a grant that another replica could renew.
 */
export function silenceMs(ttlMs: number): number {
  return ttlMs / 4;
}

/**
 * A stream opened to replace a silent one is held to this part of the silence bound until its
 * first answer: another replica may be silent too (round_robin may also have put it on the
 * silent one again), and the next stream goes to another.
 */
export const REPLACEMENT_BOUND = 1 / 3;

/**
 * The silence bound of the open stream: `wholeMs` (ttl/4), or a part of it
 * ({@link REPLACEMENT_BOUND}) for a stream `replacing` a silent one that has not answered yet;
 * never less than twice the slowest recent answer of the grant or its client
 * ({@link SlowestAnswer}), up to twice `wholeMs`. A replica that is slow, not silent, must not be
 * taken for a silent one: each stream opened is one more renewal on the replicas (the superseded
 * ones are renewed until they end), so with hundreds of grants a burst of late answers (a replica
 * just restarted, a loaded host) became thousands of new streams a second, which made every answer
 * later still, until none came before its deadline (issue 40). A silent replica answers nothing
 * and leaves the bound as it was.
 */
export function boundMs(wholeMs: number, replacing: boolean, slowestMs: number): number {
  const base = replacing ? wholeMs * REPLACEMENT_BOUND : wholeMs;
  return Math.max(base, Math.min(2 * slowestMs, 2 * wholeMs));
}

/**
 * The slowest recent answer of one kept grant's streams, or of all of a client's (from the send
 * of a request to the answer that echoes it), faded by half every ttl (four periods), so that a
 * replica slow for a while and fast again is soon held to the usual bound. An answer later than
 * the ttl is left out: its replica was stopped (a frozen host that woke up), not slow, and what it
 * would teach is to wait for a silent replica.
 */
export class SlowestAnswer {
  #slowestMs = 0;
  #atMs = 0;

  /** An answer came `latencyMs` after its request was sent, at `nowMs`. */
  answered(latencyMs: number, nowMs: number, periodMs: number): void {
    if (latencyMs > 4 * periodMs) {
      return;
    }
    if (latencyMs >= this.ms(nowMs, periodMs)) {
      this.#slowestMs = latencyMs;
      this.#atMs = nowMs;
    }
  }

  /** The slowest recent answer's time, faded by half for every ttl since it came. */
  ms(nowMs: number, periodMs: number): number {
    if (this.#slowestMs === 0) {
      return 0;
    }
    return this.#slowestMs * Math.pow(0.5, (nowMs - this.#atMs) / (4 * periodMs));
  }
}

/**
 * The metadata a grant's stream is opened with: wait for a connection to a replica rather than
 * fail while none is up (a rolling restart), so that it starts the moment one is, whatever its
 * reopen backoff. A candidate still waiting to lead opens without it: its refused streams count
 * (see CampaignStream).
 */
export function waitingForReady(): grpc.Metadata {
  return new grpc.Metadata({ waitForReady: true });
}

/**
 * The deadline of a grant whose ttl was just cut to `ttlMs` by a request sent at `sentAt`: the
 * server's drift (ttl/100 + 2 ms) off the shorter ttl. The nodes hold the key at least that long
 * once that request's renewal lands, and the longer ttl before it lands.
 */
export function shortenedDeadline(sentAt: number, ttlMs: number): number {
  return sentAt + ttlMs * (1 - 0.01) - 2;
}

/**
 * @internal How long a grant (a lease, a leadership) may be relied on: valid while
 * `now < deadline - guard`; lost once, when the guarded deadline passes without a renewal or
 * its owner says so; or ended by its holder (released, resigned), after which no loss is
 * reported.
 */
export class Lifetime {
  /** Names it in messages, e.g. "lease on resource 'orders/42'". */
  readonly what: string;
  /** The resource or election the errors name. */
  readonly subject: string;
  readonly #controller = new AbortController();
  readonly #stop: (error: LeaseLostError) => void;
  #listeners: LostCallback[] = [];
  #guardMs: number;
  #deadline: number;
  #ended = false;
  #lost: LeaseLostError | undefined;
  /** The loss timer, with the clock that started it (a test may put another in place meanwhile). */
  #expiry: { clock: Clock; timer: ClockTimer } | undefined;

  /** `stop` runs on the loss, before the callbacks (stop renewing, give the grant back). */
  constructor(what: string, subject: string, ttlMs: number, deadline: number,
    stop: (error: LeaseLostError) => void = () => {}) {
    this.what = what;
    this.subject = subject;
    this.#guardMs = guardMs(ttlMs);
    this.#deadline = deadline;
    this.#stop = stop;
    this.#schedule();
  }

  get valid(): boolean {
    return !this.#ended && this.#lost === undefined && now() < this.#deadline - this.#guardMs;
  }

  /** Milliseconds left while valid (up to the guard before the deadline); 0 once not valid. */
  get remainingMs(): number {
    const left = this.#deadline - this.#guardMs - now();
    return !this.#ended && this.#lost === undefined && left > 0 ? left : 0;
  }

  get deadline(): number {
    return this.#deadline;
  }

  get guardMs(): number {
    return this.#guardMs;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get lostError(): LeaseLostError | undefined {
    return this.#lost;
  }

  /** Ended by its holder (released, resigned). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Neither ended nor lost (it may have run out a moment ago: see `valid`). */
  get open(): boolean {
    return !this.#ended && this.#lost === undefined;
  }

  /**
   * The ttl changed: the guard becomes the larger of the one it had and the new ttl's, so that
   * it never shrinks (a larger guard only reports a loss earlier).
   */
  ttlChanged(ttlMs: number): void {
    this.#guardMs = Math.max(this.#guardMs, guardMs(ttlMs));
    if (this.open) {
      this.#schedule();
    }
  }

  /** A renewal answered: moves the deadline, only forward. */
  renewed(deadline: number): void {
    if (this.open && deadline > this.#deadline) {
      this.#deadline = deadline;
      this.#schedule();
    }
  }

  /** A shorter ttl: moves the deadline, only back. */
  cut(deadline: number): void {
    if (this.open && deadline < this.#deadline) {
      this.#deadline = deadline;
      this.#schedule();
    }
  }

  /** A unary renewal (Extend) answered: the deadline it gives, either way. */
  reset(deadline: number): void {
    if (this.open) {
      this.#deadline = deadline;
      this.#schedule();
    }
  }

  /** The holder gives it up; true only the first time (no loss is reported afterwards). */
  end(): boolean {
    if (this.#ended) {
      return false;
    }
    this.#ended = true;
    this.#listeners = [];
    this.#clear();
    return true;
  }

  /** Reports the loss unless it is ended or already lost: stop, then every callback, once. */
  lose(code: number, details: string): void {
    if (!this.open) {
      return;
    }
    const error = new LeaseLostError(code, details, this.subject);
    this.#lost = error;
    this.#clear();
    this.#stop(error);
    const listeners = this.#listeners;
    this.#listeners = [];
    this.#controller.abort(error);
    for (const listener of listeners) {
      try {
        listener(error);
      } catch (e) {
        process.emitWarning(`a loss callback of the ${this.what} threw: ${String(e)}`);
      }
    }
  }

  /** Calls `callback` once on the loss, at once if it already happened; never once ended. */
  onLost(callback: LostCallback): void {
    if (this.#lost !== undefined) {
      callback(this.#lost);
    } else if (!this.#ended) {
      this.#listeners.push(callback);
    }
  }

  #schedule(): void {
    this.#clear();
    const delay = this.#deadline - this.#guardMs - now();
    const { clock } = seams;
    const timer = clock.setTimeout(() => {
      this.#expiry = undefined;
      if (!this.open) {
        return;
      }
      if (now() < this.#deadline - this.#guardMs) {
        this.#schedule(); // woke a little early
        return;
      }
      this.lose(Status.DEADLINE_EXCEEDED, `${this.what} ran out: its local deadline came within `
        + `${this.#guardMs} ms without a renewal`);
    }, Math.max(0, Math.ceil(delay)));
    timer.unref();
    this.#expiry = { clock, timer };
  }

  #clear(): void {
    if (this.#expiry !== undefined) {
      this.#expiry.clock.clearTimeout(this.#expiry.timer);
      this.#expiry = undefined;
    }
  }
}

/** What a kept stream asks of and tells its owner. */
export interface KeptStreamEvents<Res> {
  /** An answer that echoes a sequence this client sent (not before `ignoreBefore`), with that request's send time. */
  answered(response: Res, sentAt: number, sequence: number): void;
  /** The stream ended for good without its owner closing it: a final end, or one not worth resuming. */
  ended(end: StreamEnd): void;
  /** A stream ended with a status that may be resumed, after living `livedMs`: open another? */
  resumable(end: StreamEnd, livedMs: number): boolean;
}

/** @internal How a kept stream talks to the server. */
export interface KeptStreamSpec<Req, Res> {
  /** Names it in messages, e.g. "KeepAlive stream of resource 'orders/42'". */
  what: string;
  /** Opens a new stream on the channel. */
  open(): grpc.ClientDuplexStream<Req, Res>;
  /** The request to send now, without its sequence; `first`: the first of its stream. */
  request(first: boolean): Omit<Req, 'sequence'>;
  /** The sequence an answer echoes. */
  sequenceOf(response: Res): string | number;
  /** How often to send a request (ttl/4). */
  periodMs: number;
  /** Backoff between reopens (each wait a random time between half and all of the policy's). */
  retry: RetryPolicy;
  /**
   * The silence bound now ({@link silenceMs} of the ttl), or undefined while no answers are to be
   * expected (a candidate still waiting to lead).
   */
  silenceMs(): number | undefined;
  /** Where `open` gets its stubs: made anew when a stream is found silent. */
  connection?: { readonly generation: number; renew(generation: number): void };
  /**
   * The slowest recent answer of every kept grant of the client, which the silence bound follows
   * as it follows the grant's own. A stream that just moved (its replica shut down) has no answer
   * of its own yet, and its first one is late when hundreds of streams moved with it to replicas
   * busy starting: the other grants' answers say so. Only answers on a grant's open stream count
   * there: a late answer on a stream left for its silence is a replica that stopped and woke (a
   * frozen host), which says nothing of the others, and the other grants must still leave a
   * silent replica within the bound. A silent replica leaves it as it was (it answers nothing),
   * and the replicas still answering keep it short.
   */
  shared?: SlowestAnswer;
}

/** When the last requests were sent, by sequence; older ones are too old to move a deadline. */
const REMEMBERED = 16;

/**
 * @internal The client end of a kept grant's stream, across as many streams as it takes: a
 * request at once and one every period with a rising sequence; a broken stream reopened (the
 * first request again, same sequence counter) while its owner finds it worth it.
 *
 * It never cancels or half-closes a live stream unless its owner asks (grpc-js's cancel
 * half-closes first, which the server takes for a release or a resign): a silent one is left
 * open (`#abandoned`) until the owner is done with the grant.
 */
export class KeptStream<Req, Res> {
  events: KeptStreamEvents<Res>;
  readonly #spec: KeptStreamSpec<Req, Res>;
  readonly #sent = new Map<number, number>();
  #call: grpc.ClientDuplexStream<Req, Res> | undefined;
  #openedAt = 0;
  #firstOfCall = 1;
  #streams = 0;
  #nextSequence = 1;
  #ignoreBefore = 0;
  #periodMs: number;
  readonly #slowest = new SlowestAnswer();
  #timer: NodeJS.Timeout | undefined;
  #reopen: NodeJS.Timeout | undefined;
  #failures = 0;
  /** The highest sequence an answer on the open stream echoed. */
  #echoed = 0;
  /** The connection generation the open stream was opened on. */
  #openedOn = 0;
  /** The open stream replaces a silent one and has not answered yet: held to a part of the bound. */
  #replacing = false;
  /** The next stream opened replaces a silent one. */
  #replaceNext = false;
  /** The pending silence check, with the clock that started it. */
  #silence: { clock: Clock; timer: ClockTimer } | undefined;
  /**
   * Streams left for their silence, with the first sequence each sent: open until they end, or
   * until the owner is done; their late answers still count.
   */
  readonly #abandoned = new Map<grpc.ClientDuplexStream<Req, Res>, number>();
  /** The owner half-closed (or cancelled): no more requests, no events. */
  #closing = false;
  /** Ended for good (a final end, or not resumed). */
  #finalEnd: StreamEnd | undefined;
  #closed: Promise<StreamEnd> | undefined;
  #resolveClosed: ((end: StreamEnd) => void) | undefined;

  constructor(spec: KeptStreamSpec<Req, Res>, events: KeptStreamEvents<Res>) {
    this.#spec = spec;
    this.events = events;
    this.#periodMs = spec.periodMs;
    this.#open(); // a closed channel throws here
  }

  /** The sequence the next request will carry. */
  get nextSequence(): number {
    return this.#nextSequence;
  }

  /** How many streams were opened so far (1 + the reopens). */
  get streams(): number {
    return this.#streams;
  }

  /** Whether a stream is open now (false while waiting to reopen, and once closed or ended). */
  get up(): boolean {
    return this.#call !== undefined;
  }

  /** From now on, answers that echo a sequence below `sequence` are ignored. */
  ignoreBefore(sequence: number): void {
    this.#ignoreBefore = Math.max(this.#ignoreBefore, sequence);
  }

  /**
   * Sends a request now (with the owner's state now). Returns its sequence; undefined while the
   * stream is down (the next stream's first request carries that state, with `nextSequence`).
   */
  send(): number | undefined {
    if (this.#closing || this.#call === undefined) {
      return undefined;
    }
    return this.#write(this.#call, false);
  }

  /** Sends requests every `periodMs` from now on. */
  setPeriod(periodMs: number): void {
    this.#periodMs = periodMs;
    if (this.#timer !== undefined) {
      this.#startTimer();
    }
  }

  /**
   * Half-closes (the server releases or resigns, and ends the stream); resolves with how the
   * stream ended. While the stream is down, a new one is opened for it with the first request
   * and half-closed at once. Once the stream ended for good, resolves with that end.
   */
  halfClose(): Promise<StreamEnd> {
    this.#dropAbandoned();
    if (this.#finalEnd !== undefined && this.#closed === undefined) {
      return Promise.resolve(this.#finalEnd);
    }
    if (this.#closed !== undefined) {
      return this.#closed;
    }
    this.#closing = true;
    this.#closed = new Promise((resolve) => { this.#resolveClosed = resolve; });
    this.#stopTimers();
    let call = this.#call;
    if (call === undefined) {
      try {
        call = this.#openCall();
        this.#write(call, true);
      } catch (e) {
        this.#resolveClosed?.({ code: Status.UNAVAILABLE, details: `the ${this.#spec.what} could not be opened: ${String(e)}` });
        return this.#closed;
      }
    }
    call.end();
    return this.#closed;
  }

  /**
   * Half-closes and waits up to `timeoutMs` for the end; cancels and reports DEADLINE_EXCEEDED
   * after that. A stream that did not end by then may be on a silent replica: the calls after it
   * go over new connections (see `#leaveSilent`).
   */
  close(timeoutMs: number): Promise<StreamEnd> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.#call !== undefined) {
          this.#spec.connection?.renew(this.#openedOn);
        }
        this.cancel();
        resolve({ code: Status.DEADLINE_EXCEEDED, details: `no end of the ${this.#spec.what} within ${timeoutMs} ms` });
      }, timeoutMs);
      void this.halfClose().then((end) => {
        clearTimeout(timer);
        resolve(end);
      });
    });
  }

  /**
   * Stops: no more requests, no reopening, no events. Cancels the stream if one is open (grpc-js
   * half-closes before it resets, so the server may take it for a release or a resign): true
   * then, false when no stream was open.
   */
  cancel(): boolean {
    this.#closing = true;
    this.#stopTimers();
    this.#dropAbandoned();
    const call = this.#call;
    if (call === undefined) {
      return false;
    }
    call.cancel();
    return true;
  }

  #open(): void {
    const call = this.#openCall();
    this.#write(call, true);
    this.#startTimer();
  }

  #openCall(): grpc.ClientDuplexStream<Req, Res> {
    const generation = this.#spec.connection?.generation ?? 0;
    const call = this.#spec.open();
    this.#call = call;
    this.#openedOn = generation;
    this.#streams++;
    this.#openedAt = now();
    this.#firstOfCall = this.#nextSequence;
    this.#echoed = 0;
    this.#replacing = this.#replaceNext;
    this.#replaceNext = false;
    call.on('data', (response: Res) => this.#answered(call, response));
    // Every failure also comes as 'status'; without a listener 'error' would be thrown.
    call.on('error', () => {});
    call.on('status', (status: grpc.StatusObject) => this.#ended(call, {
      code: status.code, details: status.details, pushbackMs: pushbackOf(status.metadata),
    }));
    return call;
  }

  #write(call: grpc.ClientDuplexStream<Req, Res>, first: boolean): number {
    const sequence = this.#nextSequence++;
    this.#sent.set(sequence, now());
    this.#sent.delete(sequence - REMEMBERED);
    call.write({ ...this.#spec.request(first), sequence: String(sequence) } as unknown as Req);
    this.#watchSilence();
    return sequence;
  }

  #startTimer(): void {
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
    }
    this.#timer = setInterval(() => this.send(), Math.max(1, this.#periodMs));
    this.#timer.unref();
  }

  #stopTimers(): void {
    this.#unwatchSilence();
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    if (this.#reopen !== undefined) {
      clearTimeout(this.#reopen);
      this.#reopen = undefined;
    }
  }

  #answered(call: grpc.ClientDuplexStream<Req, Res>, response: Res): void {
    try {
      this.#take(call, response);
    } finally {
      answerProcessed(this.#spec.what, response);
    }
  }

  #take(call: grpc.ClientDuplexStream<Req, Res>, response: Res): void {
    const current = call === this.#call;
    // A silent stream that answers late: a replica that was only slow. Its answer is dated by
    // the send time of the request it echoes, as any other.
    const firstOfCall = current ? this.#firstOfCall : this.#abandoned.get(call);
    if (firstOfCall === undefined || this.#closing) {
      return;
    }
    const sequence = Number(this.#spec.sequenceOf(response));
    if (current) {
      this.#replacing = false;
      if (sequence > this.#echoed) {
        this.#echoed = sequence; // it answers every earlier request too: the server renews for the latest
      }
    }
    const sentAt = this.#sent.get(sequence);
    // Only while answers are due: a candidate's first answer comes when it leads, not late.
    if (sentAt !== undefined && this.#spec.silenceMs() !== undefined) {
      const at = now();
      this.#slowest.answered(at - sentAt, at, this.#periodMs);
      if (current) {
        this.#spec.shared?.answered(at - sentAt, at, this.#periodMs);
      }
    }
    // Not an answer this client can date (a sequence it never sent, or sent on another
    // stream), or one dated before a change its owner made: it moves nothing.
    if (sentAt === undefined || sequence < firstOfCall || sequence < this.#ignoreBefore) {
      return;
    }
    if (current) {
      this.#failures = 0;
    }
    this.events.answered(response, sentAt, sequence);
  }

  #ended(call: grpc.ClientDuplexStream<Req, Res>, end: StreamEnd): void {
    if (call !== this.#call) {
      this.#abandoned.delete(call); // a silent stream that ended after all
      return;
    }
    this.#call = undefined;
    this.#unwatchSilence();
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    if (this.#closing) {
      this.#resolveClosed?.(end);
      return;
    }
    this.#broken(end, false);
  }

  /**
   * The open stream is over without its owner asking (`silent`: it was left for its silence):
   * a loss, or a new stream with the same first request after a backoff with jitter, after the
   * server's pushback (rule 17), or at once after a silence. A pushback may
   * outlast the guarded deadline: the lifetime's own timer reports the loss then, and the reopen
   * finds the stream closing.
   */
  #broken(end: StreamEnd, silent: boolean): void {
    // "Do not retry" (rule 17) ends it as a final status does: a loss with the UNAVAILABLE.
    if ((!silent && (isFinalEnd(end.code) || end.pushbackMs === DO_NOT_RETRY))
      || !this.events.resumable(end, now() - this.#openedAt)) {
      this.#finalEnd = end;
      this.#closing = true;
      this.#dropAbandoned();
      this.events.ended(end);
      return;
    }
    this.#failures++;
    const backoff = this.#spec.retry.backoffMs(this.#failures);
    // A silence took a bound of time already: the next stream goes at once (the failures go on
    // counting, for the backoff of a later end of another kind).
    let wait = 0;
    if (!silent) {
      wait = end.pushbackMs !== undefined ? jittered(end.pushbackMs) : backoff / 2 + Math.random() * (backoff / 2);
    }
    this.#reopen = setTimeout(() => {
      this.#reopen = undefined;
      if (this.#closing) {
        return;
      }
      try {
        this.#open();
      } catch (e) {
        // The channel was closed: nothing can reach the server any more.
        const closed = { code: Status.UNAVAILABLE, details: `the ${this.#spec.what} could not be reopened: ${String(e)}` };
        this.#finalEnd = closed;
        this.#closing = true;
        this.events.ended(closed);
      }
    }, wait);
  }

  /** When the open stream counts as silent, or undefined while nothing is outstanding. */
  #silentAt(): number | undefined {
    if (this.#call === undefined || this.#closing) {
      return undefined;
    }
    const whole = this.#spec.silenceMs();
    if (whole === undefined) {
      return undefined;
    }
    const at = now();
    const shared = this.#spec.shared?.ms(at, this.#periodMs) ?? 0;
    const slowestMs = Math.max(this.#slowest.ms(at, this.#periodMs), shared);
    const bound = boundMs(whole, this.#replacing, slowestMs);
    // The oldest request of this stream that no answer echoed (one too old to be remembered
    // was sent earlier still: a later send time only delays the silence by a period).
    for (let sequence = Math.max(this.#firstOfCall, this.#echoed + 1); sequence < this.#nextSequence; sequence++) {
      const sentAt = this.#sent.get(sequence);
      if (sentAt !== undefined) {
        return sentAt + bound;
      }
    }
    return undefined;
  }

  /** Arms the silence check unless one is pending (it arms itself again when it fires early). */
  #watchSilence(): void {
    if (this.#silence !== undefined) {
      return;
    }
    const due = this.#silentAt();
    if (due === undefined) {
      return;
    }
    const { clock } = seams;
    const timer = clock.setTimeout(() => {
      this.#silence = undefined;
      const at = this.#silentAt();
      if (at === undefined) {
        return;
      }
      if (now() < at) {
        this.#watchSilence(); // answered meanwhile, or a later request is the oldest now
        return;
      }
      this.#leaveSilent();
    }, Math.max(0, Math.ceil(due - now())));
    timer.unref();
    this.#silence = { clock, timer };
  }

  #unwatchSilence(): void {
    if (this.#silence !== undefined) {
      this.#silence.clock.clearTimeout(this.#silence.timer);
      this.#silence = undefined;
    }
  }

  /** The open stream is silent: left open (not cancelled: see the class), and replaced. */
  #leaveSilent(): void {
    const call = this.#call;
    if (call === undefined) {
      return;
    }
    this.#abandoned.set(call, this.#firstOfCall);
    this.#call = undefined;
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    this.#spec.connection?.renew(this.#openedOn);
    this.#replaceNext = true;
    const bound = this.#spec.silenceMs() ?? 0;
    this.#broken({ code: Status.UNAVAILABLE,
      details: `no answer within ${Math.round(bound)} ms: the ${this.#spec.what} was silent` }, true);
  }

  /** The owner is done with the grant: the silent streams may end now (see the class). */
  #dropAbandoned(): void {
    for (const call of this.#abandoned.keys()) {
      call.cancel();
    }
    this.#abandoned.clear();
  }
}
