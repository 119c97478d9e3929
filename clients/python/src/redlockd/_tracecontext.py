"""The caller's OpenTelemetry context on every call, when the application has the
``opentelemetry-api`` package (optional: the client works without it). The propagator the
application set up (W3C ``traceparent``/``tracestate`` under the SDK's defaults) writes into the
call's metadata as the call starts, from the context current then: a unary call carries its
caller's context, a kept stream that of the call that opened it."""
from __future__ import annotations

import collections
from typing import Any, Callable, Dict, List, Optional, Tuple

import grpc

__all__ = ["intercept", "aio_interceptors"]

Inject = Callable[[Dict[str, str]], None]


def _inject() -> Optional[Inject]:
    """``opentelemetry.propagate.inject``, or None without the package."""
    try:
        from opentelemetry import propagate  # type: ignore[import]
    except ImportError:
        return None
    inject: Inject = propagate.inject
    return inject


def _with_context(inject: Inject, metadata: Any) -> List[Tuple[str, str]]:
    carrier: Dict[str, str] = {}
    inject(carrier)
    return list(metadata or ()) + list(carrier.items())


class _Details(collections.namedtuple(
        "_Details", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")),
        grpc.ClientCallDetails):  # type: ignore[misc]
    """The call's details with the context added to its metadata."""


class _Interceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,  # type: ignore[misc]
                   grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):  # type: ignore[misc]
    def __init__(self, inject: Inject) -> None:
        self._inject = inject

    def _details(self, d: Any) -> _Details:
        return _Details(d.method, d.timeout, _with_context(self._inject, d.metadata), d.credentials,
                        getattr(d, "wait_for_ready", None), getattr(d, "compression", None))

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(self._details(details), requests)

    def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(self._details(details), requests)


def intercept(channel: grpc.Channel) -> grpc.Channel:
    """``channel``, its calls carrying the caller's context; ``channel`` itself without
    OpenTelemetry."""
    inject = _inject()
    if inject is None:
        return channel
    intercepted: grpc.Channel = grpc.intercept_channel(channel, _Interceptor(inject))
    return intercepted


def aio_interceptors() -> List[Any]:
    """The interceptors to make a ``grpc.aio`` channel with (aio channels take them only then):
    one per call kind, or none without OpenTelemetry."""
    found = _inject()
    if found is None:
        return []
    inject: Inject = found

    def details(d: Any) -> Any:
        return grpc.aio.ClientCallDetails(d.method, d.timeout, _with_context(inject, d.metadata), d.credentials,
                                          d.wait_for_ready)

    class UnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
        async def intercept_unary_unary(self, continuation: Any, d: Any, request: Any) -> Any:
            return await continuation(details(d), request)

    class UnaryStream(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
        async def intercept_unary_stream(self, continuation: Any, d: Any, request: Any) -> Any:
            return await continuation(details(d), request)

    class StreamStream(grpc.aio.StreamStreamClientInterceptor):  # type: ignore[misc]
        async def intercept_stream_stream(self, continuation: Any, d: Any, requests: Any) -> Any:
            return await continuation(details(d), requests)

    return [UnaryUnary(), UnaryStream(), StreamStream()]
