package redlock

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"redlockd.dev/go/redlockv1"
)

// Tests of the silent-stream rule: a kept stream whose oldest unanswered request has waited a
// quarter of the ttl is cancelled (never half-closed) and reopened at once with the same first
// request, moved off the replica found silent; a second silence before any answer backs off; a
// candidate still waiting is left alone. Timed on the client's fake clock.

// silenceTTL is long enough that the requests every ttl/4, timed by the real clock, never come
// during a test: each is a request the test makes happen (the first, or a proclaim's).
const silenceTTL = 40 * time.Second

// keptSilently is a lease kept on a stream whose first request is left unanswered.
func keptSilently(t *testing.T) (*fakeClock, *Client, *Lease, *streamScript, string) {
	t.Helper()
	clk := newFakeClock()
	f := newFake()
	f.acquire = grants(silenceTTL)
	s := newScript(f)
	c := start(t, f, withClock(clk))
	l, err := c.Acquire(context.Background(), "orders/1", silenceTTL, 0)
	if err != nil {
		t.Fatal(err)
	}
	token := recv(t, f.acquires, "Acquire").Token
	l.OnLost(func(err error) { t.Errorf("lost: %v", err) })
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, s.reqs, "the first request"); r.Sequence != 1 {
		t.Fatalf("first request: sequence %d", r.Sequence)
	}
	return clk, c, l, s, token
}

func TestAStreamUnansweredForAQuarterOfTheTtlIsCancelledAndReopenedAtOnce(t *testing.T) {
	clk, _, l, s, token := keptSilently(t)
	start := clk.Now()

	clk.set(start.Add(silenceTTL/4 - time.Nanosecond))
	select {
	case r := <-s.reqs:
		t.Fatalf("a request (sequence %d) before a quarter of the ttl passed", r.Sequence)
	case <-time.After(20 * time.Millisecond):
	}
	clk.set(start.Add(silenceTTL / 4))
	// Over this one replica the new streams reach the replica found silent: moved on at once
	// (without a request) up to maxRepicks times, then kept.
	r := recv(t, s.reqs, "the first request of the reopened stream")
	if r.Token != token || r.Resource != "orders/1" || r.Sequence != 2 {
		t.Fatalf("reopened stream's first request: resource %q, sequence %d, same token %v", r.Resource, r.Sequence,
			r.Token == token)
	}
	if end := recv(t, s.recvEnd, "the silent stream's end"); errors.Is(end, io.EOF) || status.Code(end) != codes.Canceled {
		t.Fatalf("the silent stream ended %v, want cancelled (a half-close would give the lease back)", end)
	}
	if !l.Valid() || l.Err() != nil {
		t.Fatal("a silence cost the lease")
	}
}

func TestASecondSilenceBeforeAnyAnswerBacksOff(t *testing.T) {
	clk, _, l, s, _ := keptSilently(t)
	clk.set(clk.Now().Add(silenceTTL / 4))
	recv(t, s.reqs, "the first request of the reopened stream")

	clk.set(clk.Now().Add(silenceTTL / 4)) // silent again: now it backs off (50 to 100 ms)
	select {
	case r := <-s.reqs:
		t.Fatalf("reopened (sequence %d) without backing off", r.Sequence)
	case <-time.After(30 * time.Millisecond):
	}
	r := recv(t, s.reqs, "the first request of the third stream")
	s.answers <- answer(r.Sequence, silenceTTL)
	if !l.Valid() {
		t.Fatal("the lease went")
	}
}

func TestACandidateStillWaitingIsLeftAloneButASilentLeaderResumes(t *testing.T) {
	clk := newFakeClock()
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e, withClock(clk))
	done := campaignAsync(context.Background(), c, "a", silenceTTL)
	first := recv(t, s.reqs, "the first request")
	clk.set(clk.Now().Add(silenceTTL / 2)) // waiting to lead: no answer is due (but the first one dates it)
	select {
	case r := <-s.reqs:
		t.Fatalf("a waiting candidate's stream was reopened (request %d)", r.Sequence)
	case <-time.After(20 * time.Millisecond):
	}

	s.answers <- campaignAnswer(first.Sequence, 3, "a", silenceTTL)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	go func() { _ = res.l.Proclaim(ctx, "a2") }() // a request now, unanswered: the replica went silent
	sent := recv(t, s.reqs, "the proclaim's request")
	clk.set(clk.Now().Add(silenceTTL / 4))
	resumed := recv(t, s.reqs, "the resumed stream's first request")
	if !resumed.Resume || resumed.Token != first.Token || resumed.Sequence <= sent.Sequence {
		t.Fatalf("resumed stream's first request: resume %v, same token %v, sequence %d", resumed.Resume,
			resumed.Token == first.Token, resumed.Sequence)
	}
	if end := recv(t, s.recvEnd, "the silent stream's end"); status.Code(end) != codes.Canceled {
		t.Fatalf("the silent stream ended %v, want cancelled", end)
	}
	if !res.l.IsLeader() {
		t.Fatal("a silence cost the leadership")
	}
}

// replica is a LockService on a real loopback port, as one of several replicas.
type replica struct {
	f    *fakeServer
	s    *streamScript
	addr string
}

func startReplica(t *testing.T) *replica {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{f: newFake(), addr: lis.Addr().String()}
	r.f.acquire = grants(silenceTTL)
	r.s = newScript(r.f)
	srv := grpc.NewServer(grpc.CustomCodec(protoCodec{}))
	redlockv1.RegisterLockServiceServer(srv, r.f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return r
}

func TestAStreamReopenedOntoTheReplicaFoundSilentMovesOnAtOnce(t *testing.T) {
	a, b := startReplica(t), startReplica(t)
	conn, err := Dial(context.Background(), []string{a.addr, b.addr}, grpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	clk := newFakeClock()
	c := New(conn, withClock(clk))
	acquired := func(r *replica) int { return len(r.f.acquires) }
	// Until both replicas are ready in round_robin's eyes, each having served an Acquire.
	for i := 0; acquired(a) == 0 || acquired(b) == 0; i++ {
		if i == 50 {
			t.Fatal("a replica never served")
		}
		if _, err := c.Acquire(context.Background(), "orders/warm-up", silenceTTL, 0); err != nil {
			t.Fatal(err)
		}
	}
	l, err := c.Acquire(context.Background(), "orders/1", silenceTTL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	var silent, other *replica
	select {
	case r := <-a.s.reqs:
		silent, other = a, b
		_ = r
	case r := <-b.s.reqs:
		silent, other = b, a
		_ = r
	case <-time.After(5 * time.Second):
		t.Fatal("no KeepAlive stream")
	}
	// round_robin hands calls to the replicas in turn: place one on the other replica, so that the
	// next stream goes to the silent one.
	for i := 0; ; i++ {
		before := acquired(other)
		if _, err := c.Acquire(context.Background(), "orders/other", silenceTTL, 0); err != nil {
			t.Fatal(err)
		}
		if acquired(other) > before {
			break
		}
		if i == 4 {
			t.Fatal("round_robin never took a call to the other replica")
		}
	}

	clk.set(clk.Now().Add(silenceTTL / 4)) // the silent replica's stream: cancelled, and reopened
	r := recv(t, other.s.reqs, "the reopened stream's first request, on the other replica")
	if r.Sequence != 2 { // the stream moved on at once had sent nothing
		t.Fatalf("sequence %d, want 2", r.Sequence)
	}
	l.mu.Lock()
	k := l.keeper
	l.mu.Unlock()
	k.mu.Lock()
	moved := k.repicks
	k.mu.Unlock()
	if moved != 1 {
		t.Fatalf("%d new streams moved off the silent replica, want 1", moved)
	}
	select {
	case q := <-silent.s.reqs:
		t.Fatalf("a request (sequence %d) went to the silent replica's second stream", q.Sequence)
	default:
	}
}

func TestUnaryCallsRetryUnavailablePastTheAttemptsUntilTheirDeadlineResettingTheBackoff(t *testing.T) {
	f := newFake()
	f.acquire = grants(silenceTTL)
	var releases int32
	f.release = func(context.Context, *redlockv1.ReleaseRequest) (*redlockv1.ReleaseResponse, error) {
		if atomic.AddInt32(&releases, 1) <= 6 {
			return nil, status.Error(codes.Unavailable, "the replica is shutting down")
		}
		return &redlockv1.ReleaseResponse{Released: true}, nil
	}
	c := start(t, f, WithRetry(2, time.Millisecond, 5*time.Millisecond), WithCallTimeout(2*time.Second))
	var resets int32
	c.reconnect = func() { atomic.AddInt32(&resets, 1) }
	l, err := c.Acquire(context.Background(), "orders/1", silenceTTL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if n := atomic.LoadInt32(&releases); n != 7 {
		t.Fatalf("%d Release calls, want 7", n)
	}
	if n := atomic.LoadInt32(&resets); n != 6 {
		t.Fatalf("%d backoff resets, want one before each of the 6 retries", n)
	}
}

// Rule 7 and 3: the Release that gives a lease back (releaseQuietly) is retried as any other.
func TestTheReleaseThatGivesALeaseBackIsRetriedOnUnavailable(t *testing.T) {
	f := newFake()
	var releases int32
	f.release = func(context.Context, *redlockv1.ReleaseRequest) (*redlockv1.ReleaseResponse, error) {
		if atomic.AddInt32(&releases, 1) <= 2 {
			return nil, status.Error(codes.Unavailable, "the replica is shutting down")
		}
		return &redlockv1.ReleaseResponse{Released: true}, nil
	}
	c := start(t, f, WithRetry(2, time.Millisecond, 5*time.Millisecond))
	c.releaseQuietly("orders/1", 0, "tttttttttttttttttttttttttttttttt")
	for i := 1; i <= 3; i++ {
		if r := recv(t, f.releases, "a Release"); r.Token != "tttttttttttttttttttttttttttttttt" {
			t.Fatal("a Release of another token")
		}
	}
}
