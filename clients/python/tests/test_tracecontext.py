"""The caller's OpenTelemetry context on every call (W3C traceparent), when opentelemetry-api is
installed. Debian packages no opentelemetry for Python and PyPI is not reachable where these
tests run, so a stand-in module with the API's ``opentelemetry.propagate.inject(carrier)`` stands
for it: the test checks that the client calls it for each call and sends what it wrote."""
import contextvars
import sys
import types
import unittest

from fakeserver import FakeServerCase

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
current_traceparent: contextvars.ContextVar = contextvars.ContextVar("traceparent", default=None)


def _inject(carrier, context=None, setter=None):
    value = current_traceparent.get()
    if value is not None:
        carrier["traceparent"] = value


class TraceContextTest(FakeServerCase, unittest.TestCase):
    def setUp(self):
        package = types.ModuleType("opentelemetry")
        propagate = types.ModuleType("opentelemetry.propagate")
        propagate.inject = _inject
        package.propagate = propagate
        self._saved = {name: sys.modules.get(name) for name in ("opentelemetry", "opentelemetry.propagate")}
        sys.modules["opentelemetry"] = package
        sys.modules["opentelemetry.propagate"] = propagate
        super().setUp()
        self.seen = []

        def grant(request, context, n):
            self.seen.append(dict(context.invocation_metadata()).get("traceparent"))
            return self.fake.grant(request, context, n)

        self.fake.on_acquire = grant

    def tearDown(self):
        super().tearDown()
        for name, module in self._saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module

    def test_each_call_carries_the_callers_trace_context(self):
        token = current_traceparent.set(TRACEPARENT)
        try:
            self.client.acquire("traced", ttl=10).release()
        finally:
            current_traceparent.reset(token)
        self.client.acquire("untraced", ttl=10).release()
        self.assertEqual(self.seen, [TRACEPARENT, None])


if __name__ == "__main__":
    unittest.main()
