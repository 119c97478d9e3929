package redlock

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// fakeServer is a LockService whose answers each test scripts. Every request it receives is
// also put on a channel, so that tests await calls instead of sleeping.
type fakeServer struct {
	redlockv1.UnimplementedLockServiceServer
	acquire   func(ctx context.Context, req *redlockv1.AcquireRequest, n int) (*redlockv1.AcquireResponse, error)
	extend    func(ctx context.Context, req *redlockv1.ExtendRequest) (*redlockv1.ExtendResponse, error)
	release   func(ctx context.Context, req *redlockv1.ReleaseRequest) (*redlockv1.ReleaseResponse, error)
	keepAlive func(stream redlockv1.LockService_KeepAliveServer) error
	elections redlockv1.ElectionServiceServer // served too when set

	acquires chan *redlockv1.AcquireRequest
	releases chan *redlockv1.ReleaseRequest
	acquireN int32 // Acquire calls so far (atomic)
}

func newFake() *fakeServer {
	return &fakeServer{
		acquires: make(chan *redlockv1.AcquireRequest, 64),
		releases: make(chan *redlockv1.ReleaseRequest, 64),
	}
}

func (f *fakeServer) Acquire(ctx context.Context, req *redlockv1.AcquireRequest) (*redlockv1.AcquireResponse, error) {
	f.acquires <- req
	return f.acquire(ctx, req, int(atomic.AddInt32(&f.acquireN, 1)))
}

func (f *fakeServer) Extend(ctx context.Context, req *redlockv1.ExtendRequest) (*redlockv1.ExtendResponse, error) {
	return f.extend(ctx, req)
}

func (f *fakeServer) Release(ctx context.Context, req *redlockv1.ReleaseRequest) (*redlockv1.ReleaseResponse, error) {
	f.releases <- req
	if f.release == nil {
		return &redlockv1.ReleaseResponse{Released: true}, nil
	}
	return f.release(ctx, req)
}

func (f *fakeServer) KeepAlive(stream redlockv1.LockService_KeepAliveServer) error {
	return f.keepAlive(stream)
}

// start serves f over an in-memory connection and returns a client on it.
func start(t *testing.T, f *fakeServer, opts ...Option) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	// The server, like the client, marshals with APIv2 (see protoCodec).
	srv := grpc.NewServer(grpc.CustomCodec(protoCodec{}))
	redlockv1.RegisterLockServiceServer(srv, f)
	if f.elections != nil {
		redlockv1.RegisterElectionServiceServer(srv, f.elections)
	}
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.Dial("bufnet", grpc.WithInsecure(),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
	})
	return New(conn, opts...)
}

// grant answers an Acquire with a lease of the given validity.
func grant(req *redlockv1.AcquireRequest, validity time.Duration, fencing uint64) *redlockv1.AcquireResponse {
	return &redlockv1.AcquireResponse{Lease: &redlockv1.Lease{
		Resource: req.Resource, Token: req.Token, Validity: durationpb.New(validity), FencingToken: fencing}}
}

// grants is an acquire handler that grants every call.
func grants(validity time.Duration) func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
	return func(_ context.Context, req *redlockv1.AcquireRequest, _ int) (*redlockv1.AcquireResponse, error) {
		return grant(req, validity, 7), nil
	}
}

// recv awaits a value from ch, failing the test after a generous bound.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// fastRetry keeps the tests quick: the same attempts, 1 ms backoff.
var fastRetry = retrying(4, time.Millisecond, time.Millisecond)

// retrying is WithMaxAttempts, WithInitialBackoff and WithMaxBackoff in one Option.
func retrying(attempts int, initial, max time.Duration) Option {
	return func(c *Client) {
		for _, o := range []Option{WithMaxAttempts(attempts), WithInitialBackoff(initial), WithMaxBackoff(max)} {
			o(c)
		}
	}
}
