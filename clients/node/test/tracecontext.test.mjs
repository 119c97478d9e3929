import assert from 'node:assert/strict';
import { test } from 'node:test';
import { context, propagation, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { LockClient } from '../dist/index.js';
import { lease, startFake } from './fake-server.mjs';

// What an application with the OpenTelemetry SDK has registered: a context manager and W3C trace context.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

test('each call carries the caller\'s trace context as W3C traceparent', async (t) => {
  const seen = [];
  const fake = await startFake({
    acquire(call, cb) {
      seen.push(call.metadata.get('traceparent'));
      cb(null, { lease: lease(call.request.resource, call.request.token, 1000) });
    },
  });
  const client = new LockClient(fake.address);
  t.after(() => {
    client.close();
    fake.close();
  });
  const caller = trace.wrapSpanContext({
    traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED,
  });
  const held = await context.with(trace.setSpan(context.active(), caller),
    () => client.acquire('traced', { ttlMs: 1000 }));
  await held.release();
  await client.acquire('untraced', { ttlMs: 1000 }).then((l) => l.release());
  assert.deepEqual(seen, [['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'], []]);
});
