// Package redlocktrace sends the caller's OpenTelemetry trace context with every redlockd call,
// so that the server's span of each call joins the caller's trace. It is a package of its own so
// that the client (redlockd.dev/go/redlock) does not depend on OpenTelemetry; give its
// interceptors to the connection:
//
//	conn, err := redlock.Dial(ctx, addrs, grpc.WithInsecure(),
//		grpc.WithChainUnaryInterceptor(redlocktrace.UnaryClientInterceptor()),
//		grpc.WithChainStreamInterceptor(redlocktrace.StreamClientInterceptor()))
//
// The context is the call's ctx: a unary call carries its caller's trace, a KeepAlive or
// Campaign stream that of the ctx it was opened with.
package redlocktrace

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Option changes what the interceptors send.
type Option func(*config)

type config struct {
	given propagation.TextMapPropagator
}

// WithPropagator sends what p writes instead of what the global propagator writes
// (otel.SetTextMapPropagator; W3C trace context is propagation.TraceContext{}).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.given = p }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// propagator is the configured one, else the global one as it is when the call starts.
func (c config) propagator() propagation.TextMapPropagator {
	if c.given != nil {
		return c.given
	}
	return otel.GetTextMapPropagator()
}

// UnaryClientInterceptor adds the trace context of each unary call's ctx to its metadata.
func UnaryClientInterceptor(opts ...Option) grpc.UnaryClientInterceptor {
	c := newConfig(opts)
	return func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		return invoker(inject(ctx, c.propagator()), method, req, reply, cc, callOpts...)
	}
}

// StreamClientInterceptor adds the trace context of each stream's ctx to its metadata.
func StreamClientInterceptor(opts ...Option) grpc.StreamClientInterceptor {
	c := newConfig(opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(inject(ctx, c.propagator()), desc, cc, method, callOpts...)
	}
}

func inject(ctx context.Context, p propagation.TextMapPropagator) context.Context {
	md, ok := metadata.FromOutgoingContext(ctx)
	if ok {
		md = md.Copy()
	} else {
		md = metadata.MD{}
	}
	p.Inject(ctx, carrier(md))
	return metadata.NewOutgoingContext(ctx, md)
}

// carrier is outgoing metadata as OpenTelemetry's TextMapCarrier (keys are lower case in both).
type carrier metadata.MD

func (c carrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c carrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c carrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}
