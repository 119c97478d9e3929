// The client end of a KeepAlive stream: moves its lease's deadline after each renewal and
// reports the lease lost when the stream ends without the holder having asked.
//
// The server counts a renewal's validity from when it finished, and its answer may then spend
// any time on the way. So the deadline is counted from the send time of the request whose
// sequence the answer echoes: that renewal began after the request arrived, so this deadline
// is never later than the server's. A request goes out every ttl/4 to keep that send time
// recent; each one renews at once.
import * as grpc from '@grpc/grpc-js';
import type { KeepAliveRequest } from './proto/redlock/v1/KeepAliveRequest';
import type { KeepAliveResponse__Output } from './proto/redlock/v1/KeepAliveResponse';
import type { LockServiceClient } from './proto/redlock/v1/LockService';
import { fromDuration, now, toDuration } from './time';

/** How a stream ended. */
export interface StreamEnd {
  code: number;
  details: string;
}

/** What the keeper tells its lease. */
export interface KeeperEvents {
  /** A renewal answered: the deadline it supports (send time of the echoed request + validity). */
  renewed(deadline: number): void;
  /** The stream ended without the holder asking. */
  ended(end: StreamEnd): void;
}

/** When the last requests were sent, by sequence; older ones are too old to move a deadline. */
const REMEMBERED = 16;

export class LeaseKeeper {
  readonly #events: KeeperEvents;
  readonly #call: grpc.ClientDuplexStream<KeepAliveRequest, KeepAliveResponse__Output>;
  readonly #request: KeepAliveRequest;
  readonly #sent = new Map<number, number>();
  readonly #ended: Promise<StreamEnd>;
  #timer: NodeJS.Timeout | undefined;
  #nextSequence = 1;
  #closing = false;
  #done = false;

  constructor(stub: LockServiceClient, resource: string, token: string, ttlMs: number, events: KeeperEvents) {
    this.#events = events;
    this.#request = { resource, token, ttl: toDuration(ttlMs) };
    this.#call = stub.KeepAlive();
    this.#ended = new Promise((resolve) => {
      this.#call.on('status', (status: grpc.StatusObject) => {
        this.#done = true;
        this.#stopRequests();
        const end = { code: status.code, details: status.details };
        resolve(end);
        if (!this.#closing) {
          this.#events.ended(end);
        }
      });
    });
    this.#call.on('data', (response: KeepAliveResponse__Output) => this.#answered(response));
    // Every failure also comes as 'status'; without a listener 'error' would be thrown.
    this.#call.on('error', () => {});
    this.#send();
    const period = Math.max(1, ttlMs / 4);
    this.#timer = setInterval(() => this.#send(), period);
    this.#timer.unref();
  }

  #send(): void {
    if (this.#closing || this.#done) {
      return;
    }
    const sequence = this.#nextSequence++;
    this.#sent.set(sequence, now());
    this.#sent.delete(sequence - REMEMBERED);
    this.#call.write({ ...this.#request, sequence: String(sequence) });
  }

  #answered(response: KeepAliveResponse__Output): void {
    const sentAt = this.#sent.get(Number(response.sequence));
    if (sentAt === undefined || response.lease === null) {
      return; // not an answer this client can date: it does not move the deadline
    }
    // The lease only moves its deadline forward: an answer about an earlier renewal (or a
    // jeopardy report) may arrive after a later one.
    this.#events.renewed(sentAt + fromDuration(response.lease.validity));
  }

  #stopRequests(): void {
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Half-closes: the server releases the lease and ends the stream; resolves with how it ended. */
  halfClose(): Promise<StreamEnd> {
    if (!this.#closing) {
      this.#closing = true;
      this.#stopRequests();
      if (!this.#done) {
        this.#call.end();
      }
    }
    return this.#ended;
  }

  /**
   * Stops the stream without waiting for it. Note that grpc-js half-closes before it resets
   * the stream, so the server may take this for a half-close and release the lease.
   */
  cancel(): void {
    this.#closing = true;
    this.#stopRequests();
    if (!this.#done) {
      this.#call.cancel();
    }
  }
}
