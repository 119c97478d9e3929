import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { status } from '@grpc/grpc-js';
import { LockClient, LockServiceError } from '../dist/index.js';

const REFUSED = 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1';

test("grpc-js's empty trailing resolution note is left out of the message and the details", () => {
  const e = new LockServiceError(status.UNAVAILABLE, `${REFUSED}. Resolution note: `, 'orders/1');
  assert.equal(e.details, REFUSED);
  assert.equal(e.message, `UNAVAILABLE: ${REFUSED} (resource 'orders/1')`);
});

test('a resolution note with text is kept', () => {
  const details = `${REFUSED}. Resolution note: DNS resolution failed for nowhere.invalid`;
  const e = new LockServiceError(status.UNAVAILABLE, details, 'orders/1');
  assert.equal(e.details, details);
});

/** A port on which nothing listens: taken from the system, then given back. */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a connection error ends with its last error, not with a dangling "Resolution note:"', async (t) => {
  const client = new LockClient(`127.0.0.1:${await closedPort()}`, {
    callTimeoutMs: 300, retry: { maxAttempts: 2, initialBackoffMs: 10, maxBackoffMs: 20 },
  });
  t.after(() => client.close());
  await assert.rejects(client.acquire('orders/1', { ttlMs: 1000 }), (e) => {
    assert.ok(e instanceof LockServiceError, String(e));
    assert.equal(e.codeName, 'UNAVAILABLE');
    assert.doesNotMatch(e.message, /Resolution note/);
    assert.match(e.message, /ECONNREFUSED/);
    return true;
  });
});
