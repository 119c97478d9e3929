package redlock

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"redlockd.dev/go/redlockv1"
)

// An idempotent unary call that round_robin puts on a replica that never answers (a frozen host, a
// partition: the connection stays open until a keepalive ping fails, seconds later) is retried on
// the other replica within the call's own deadline: each attempt is held to half the call timeout.
func TestAReleaseOnAReplicaThatNeverAnswersIsRetriedOnTheOtherWithinItsDeadline(t *testing.T) {
	a, silent := startReplica(t), startReplica(t)
	silent.f.release = func(ctx context.Context, _ *redlockv1.ReleaseRequest) (*redlockv1.ReleaseResponse, error) {
		<-ctx.Done()
		// What the server answers when a call's deadline has passed, if the client is still there.
		return nil, status.Error(codes.DeadlineExceeded, "the call's deadline passed")
	}
	conn, err := Dial(context.Background(), []string{a.addr, silent.addr}, grpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	const callTimeout = time.Second
	c := New(conn, WithCallTimeout(callTimeout), retrying(4, time.Millisecond, 5*time.Millisecond))
	// Leases until both replicas are ready in round_robin's eyes, each having served an Acquire.
	var leases []*Lease
	for len(a.f.acquires) == 0 || len(silent.f.acquires) == 0 || len(leases) < 4 {
		if len(leases) == 50 {
			t.Fatal("a replica never served")
		}
		l, err := c.Acquire(context.Background(), "orders/1", silenceTTL)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	// One after the other: round_robin puts every second one on the silent replica.
	for i, l := range leases[len(leases)-4:] {
		start := time.Now()
		ok, err := l.Release(context.Background())
		if took := time.Since(start); err != nil || !ok || took >= callTimeout {
			t.Fatalf("release %d: %v, %v after %s (call timeout %s)", i, ok, err, took, callTimeout)
		}
	}
}
