// The client's connections to the replicas: one grpc-js channel that spreads the calls over every
// address (round_robin, rule 16), made anew when a kept stream finds its replica silent. Internal.
//
// Why not HTTP/2 keepalive pings, as the other clients use to leave a silent replica: when a
// ping goes unanswered, grpc-js closes the connection by ending every stream still open on it
// with END_STREAM, which a server takes for the holder's half-close: a release, or a resign.
// A replica that was only paused (SIGSTOP, a long GC pause, a frozen VM) reads it when it wakes
// and frees the lease its holder has meanwhile resumed through another replica (seen with
// grpc-js 1.14.7 and the server: SIGSTOP, a ping timeout, SIGCONT, and the key was gone from every
// node). grpc-js's cancel() does the same (END_STREAM, then RST_STREAM). So this client never closes or cancels a
// stream it still renews through: a silent one is left open and unanswered (kept.ts), and the
// calls after it go over new connections, on which the silent replica, whose handshake cannot
// complete, is not picked while it stays silent.
import * as grpc from '@grpc/grpc-js';
import type { ElectionServiceClient } from './proto/redlock/v1/ElectionService';
import type { LockServiceClient } from './proto/redlock/v1/LockService';
import { SlowestAnswer } from './kept';
import { loadProto } from './service';
import { ROUND_ROBIN } from './target';
import { traceContextInterceptors } from './tracecontext';

/**
 * The options every channel of a LockClient gets (the caller's `channelOptions` win):
 * round_robin over every address; a replica that is down is tried again every 100 ms (grpc-js's
 * default reconnect backoff grows to two minutes), so that it is connected as soon as it is back:
 * round_robin only picks a connected replica, and a stream that moves when the next replica of a
 * rolling restart stops must find the one restarted just before, not pile onto the others.
 */
export const CHANNEL_DEFAULTS: Readonly<grpc.ChannelOptions> = Object.freeze({
  'grpc.service_config': ROUND_ROBIN,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 100,
});

/** Rejects the channel options this client cannot be given safely (see the file's header). */
export function checkChannelOptions(options: grpc.ChannelOptions | undefined): void {
  const keepalive = options?.['grpc.keepalive_time_ms'];
  if (typeof keepalive === 'number' && keepalive > 0 && Number.isFinite(keepalive)) {
    throw new RangeError('grpc.keepalive_time_ms cannot be set on a LockClient: when a ping goes '
      + 'unanswered, grpc-js ends the open KeepAlive and Campaign streams with a half-close, which a '
      + 'replica that was only paused takes for a release when it wakes. The client leaves a silent '
      + 'replica by itself (README: "A replica that goes silent").');
  }
}

/** @internal The stubs calls are made on now, and the channel behind them. */
export class Connection {
  readonly #address: string;
  readonly #credentials: grpc.ChannelCredentials;
  readonly #options: grpc.ChannelOptions;
  #channel: grpc.Channel;
  #lock: LockServiceClient;
  #elections: ElectionServiceClient;
  #generation = 0;
  #closed = false;
  /** Every kept grant's answer times, which each grant's silence bound follows (kept.ts). */
  readonly answerTimes = new SlowestAnswer();

  constructor(address: string, credentials: grpc.ChannelCredentials, options: grpc.ChannelOptions) {
    this.#address = address;
    this.#credentials = credentials;
    this.#options = { ...CHANNEL_DEFAULTS, ...options };
    this.#channel = new grpc.Channel(address, credentials, this.#options); // a bad target throws here
    [this.#lock, this.#elections] = this.#stubs();
  }

  /** LockService on the current channel. */
  get lock(): LockServiceClient {
    return this.#lock;
  }

  /** ElectionService on the current channel. */
  get elections(): ElectionServiceClient {
    return this.#elections;
  }

  /** How many times the channel was made anew: the generation a call was started on. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * A stream opened on channel `generation` found its replica silent: unless that was done
   * already (by another stream of the same silence), later calls go over a new channel, with
   * connections of its own. The old channel is closed: no call starts on it any more, and the
   * calls under way on it go on until they end (grpc-js ends none of them for the close).
   */
  renew(generation: number): void {
    if (this.#closed || generation !== this.#generation) {
      return;
    }
    const old = this.#channel;
    this.#channel = new grpc.Channel(this.#address, this.#credentials,
      { ...this.#options, 'grpc.use_local_subchannel_pool': 1 });
    [this.#lock, this.#elections] = this.#stubs();
    this.#generation++;
    old.close();
  }

  /** No new calls; the calls under way go on until they end. */
  close(): void {
    this.#closed = true;
    this.#channel.close();
  }

  #stubs(): [LockServiceClient, ElectionServiceClient] {
    const { LockService, ElectionService } = loadProto().redlock.v1;
    // The caller's trace context goes with every call when @opentelemetry/api is installed.
    const over = { channelOverride: this.#channel, interceptors: traceContextInterceptors() };
    return [new LockService(this.#address, this.#credentials, over),
      new ElectionService(this.#address, this.#credentials, over)];
  }
}
