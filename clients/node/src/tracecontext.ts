// The caller's OpenTelemetry context on every call, when the application has @opentelemetry/api
// (an optional peer dependency: the client works without it). The propagator the application
// registered with the API (W3C traceparent/tracestate under the SDK's defaults) writes into the
// call's metadata as the call starts, from the context active then: a unary call carries its
// caller's context, a kept stream that of the call that opened it. Internal to the package.
import * as grpc from '@grpc/grpc-js';
import type * as OtelApi from '@opentelemetry/api';

let api: typeof OtelApi | null | undefined;

function otel(): typeof OtelApi | null {
  if (api === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require('@opentelemetry/api') as typeof OtelApi;
    } catch {
      api = null;
    }
  }
  return api;
}

const setter: OtelApi.TextMapSetter<grpc.Metadata> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

/** The interceptors to give the client's stubs: one that propagates, or none without the API. */
export function traceContextInterceptors(): grpc.Interceptor[] {
  const found = otel();
  if (found === null) {
    return [];
  }
  return [(options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      found.propagation.inject(found.context.active(), metadata, setter);
      next(metadata, listener);
    },
  })];
}
