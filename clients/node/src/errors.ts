import { status as Status } from '@grpc/grpc-js';

/** The name of a gRPC status code, e.g. 'ABORTED' (or 'CODE_<n>' for one grpc-js does not know). */
export function codeName(code: number): string {
  return Status[code] ?? `CODE_${code}`;
}

/**
 * A lock call failed. `code` is the gRPC status code, `codeName` its name. The message names
 * the resource, never a token.
 */
export class LockServiceError extends Error {
  readonly code: number;
  readonly codeName: string;
  /** The lock the call was about ('' when it is not known). */
  readonly resource: string;
  /** The status details, as the server (or grpc-js) gave them. */
  readonly details: string;

  constructor(code: number, statusDetails: string, resource = '', options?: { cause?: unknown }) {
    const details = withoutEmptyNote(statusDetails);
    const name = codeName(code);
    const shown = resource.length > 100 ? `${resource.slice(0, 100)}...` : resource;
    const about = resource !== '' && !details.includes(`'${resource}'`) ? ` (resource '${shown}')` : '';
    super(`${name}: ${details}${about}`, options);
    this.name = new.target.name;
    this.code = code;
    this.codeName = name;
    this.resource = resource;
    this.details = details;
  }

  toJSON(): { name: string; code: number; codeName: string; message: string } {
    return { name: this.name, code: this.code, codeName: this.codeName, message: this.message };
  }
}

/**
 * grpc-js ends a failed connection's details with "Resolution note: " and the resolver's note,
 * which is most often empty: a sentence that stops short. Drop it then; keep a note with text.
 */
function withoutEmptyNote(details: string): string {
  return details.replace(/\.?\s*Resolution note:\s*$/, '');
}

/** Acquire gave up because someone else holds the lock (gRPC ABORTED). */
export class LockNotAcquiredError extends LockServiceError {}

/**
 * A lease can no longer be relied on: it expired, was taken over, was released, or its
 * renewals could not reach a quorum before its validity ran out. Stop touching the resource.
 */
export class LeaseLostError extends LockServiceError {}

/** The client's error for a failed call: ABORTED is {@link LockNotAcquiredError}. */
export function errorFromStatus(code: number, details: string, resource: string): LockServiceError {
  return code === Status.ABORTED
    ? new LockNotAcquiredError(code, details, resource)
    : new LockServiceError(code, details, resource);
}


/** The error of a call its caller aborted through its signal: CANCELLED, the signal's reason as `cause`. */
export function abortedError(what: string, subject: string, signal?: AbortSignal): LockServiceError {
  return new LockServiceError(Status.CANCELLED, `${what} was aborted`, subject, { cause: signal?.reason });
}

/**
 * Settles as `promise` does, or rejects with `aborted()` as soon as `signal` aborts (at once when
 * it already has), after running `onAbort` (which stops what the promise waits for, if it can).
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, aborted: () => Error,
  onAbort: () => void = () => {}): Promise<T> {
  if (signal === undefined) {
    return promise;
  }
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      onAbort();
      reject(aborted());
    };
    if (signal.aborted) {
      stop();
      promise.catch(() => {});
      return;
    }
    signal.addEventListener('abort', stop, { once: true });
    promise.then((value) => {
      signal.removeEventListener('abort', stop);
      resolve(value);
    }, (error: unknown) => {
      signal.removeEventListener('abort', stop);
      reject(error);
    });
  });
}
