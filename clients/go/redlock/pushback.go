package redlock

import (
	"context"
	"io"
	"math/rand"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The server's early refusal (conformance rule 17): UNAVAILABLE with the trailer
// grpc-retry-pushback-ms (gRPC's retry design) says how long to stay away before trying again,
// or, negative or unparsable, not to try again at all. Waiting at least that long, with jitter,
// lets a swamped server (every holder of a restarted replica coming back at once) recover
// instead of being hit again by the same crowd at the same instant.

const pushbackKey = "grpc-retry-pushback-ms"

// doNotRetry is the pushback of a negative or unparsable value.
const doNotRetry time.Duration = -1

// parsePushback reads a trailer's value: non-negative decimal milliseconds, else doNotRetry.
func parsePushback(value string) time.Duration {
	v := strings.TrimSpace(value)
	if v == "" || len(v) > 15 || strings.TrimLeft(v, "0123456789") != "" {
		return doNotRetry // negative, fractional, huge or garbage: the server's "do not retry"
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return doNotRetry
	}
	return time.Duration(ms) * time.Millisecond
}

// refused is a call's error together with the pushback its trailers carried. It keeps the
// call's status for status.Code and status.FromError (grpc-go before 1.41 only looks for
// GRPCStatus on the error itself).
type refused struct {
	err      error
	pushback time.Duration
}

func (r *refused) Error() string              { return r.err.Error() }
func (r *refused) Unwrap() error              { return r.err }
func (r *refused) GRPCStatus() *status.Status { return status.Convert(r.err) }

// withPushback is err with the pushback its trailers carry, or err itself if they carry none.
func withPushback(err error, trailers metadata.MD) error {
	if err == nil || err == io.EOF {
		return err
	}
	values := trailers.Get(pushbackKey)
	if len(values) == 0 {
		return err
	}
	return &refused{err: err, pushback: parsePushback(values[0])}
}

// pushbackOf is the pushback an error carries (doNotRetry: do not retry); ok is false when it
// carries none, and the caller's own backoff applies.
func pushbackOf(err error) (d time.Duration, ok bool) {
	if r, is := err.(*refused); is {
		return r.pushback, true
	}
	return 0, false
}

// jitteredPushback is the wait before the retry: a random time between the pushback and 1.5
// times it.
func jitteredPushback(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + time.Duration(rand.Int63n(int64(d/2)+1))
}

// retryWait is the wait after failed attempt number attempt whose error is err: the pushback
// with jitter if err carries one, else backoff; false for "do not retry".
func retryWait(err error, backoff time.Duration) (time.Duration, bool) {
	d, ok := pushbackOf(err)
	switch {
	case !ok:
		return backoff, true
	case d == doNotRetry:
		return 0, false
	default:
		return jitteredPushback(d), true
	}
}

// refusedForGood tells whether err is a refusal with "do not retry".
func refusedForGood(err error) bool {
	d, ok := pushbackOf(err)
	return ok && d == doNotRetry
}

// invokeNoting makes a unary call, noting the pushback of its trailers on its error.
func invokeNoting(ctx context.Context, cc grpc.ClientConnInterface, method string, args, reply interface{},
	opts ...grpc.CallOption) error {
	var trailers metadata.MD
	err := cc.Invoke(ctx, method, args, reply, append(opts, grpc.Trailer(&trailers))...)
	return withPushback(err, trailers)
}

// notingStream notes the pushback of a stream's trailers on the error that ends it.
type notingStream struct{ grpc.ClientStream }

func (s notingStream) RecvMsg(m interface{}) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil || err == io.EOF {
		return err
	}
	return withPushback(err, s.ClientStream.Trailer())
}
