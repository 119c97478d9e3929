// A server whose copy of a call's deadline runs out first resets the stream with CANCEL; on a
// busy event loop grpc-js reads that reset before its own deadline timer runs, and reports
// CANCELLED. A CI run's lost-answer scenario saw an Acquire end so: CANCELLED is not retried, so
// the Acquire failed where a same-token retry was due. The client reads such a CANCELLED as
// DEADLINE_EXCEEDED, as grpc-java, grpc-go and gRPC core do.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { status } from '@grpc/grpc-js';
import { statusSeen } from '../dist/transport.js';

const DEADLINE = 1_000;

test('a CANCELLED read at or after the deadline, not caused here, is DEADLINE_EXCEEDED', () => {
  assert.equal(statusSeen(status.CANCELLED, DEADLINE, DEADLINE, false), status.DEADLINE_EXCEEDED);
  assert.equal(statusSeen(status.CANCELLED, DEADLINE, DEADLINE + 250, false), status.DEADLINE_EXCEEDED);
});

test('a CANCELLED before the deadline stays CANCELLED: the server cancelled for its own reasons', () => {
  assert.equal(statusSeen(status.CANCELLED, DEADLINE, DEADLINE - 1, false), status.CANCELLED);
});

test("the caller's own cancel stays CANCELLED, even after the deadline", () => {
  assert.equal(statusSeen(status.CANCELLED, DEADLINE, DEADLINE + 250, true), status.CANCELLED);
});

test('every other status is left as it is', () => {
  for (const code of [status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.ABORTED, status.INTERNAL]) {
    assert.equal(statusSeen(code, DEADLINE, DEADLINE + 250, false), code);
  }
});
