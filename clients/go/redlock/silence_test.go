package redlock

import (
	"context"
	"errors"
	"fmt"
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
// quarter of the ttl is superseded: a new stream with the same first request is opened at once,
// the silent one is still read (a late answer counts) and is cancelled (a RST_STREAM, never a
// half-close) only once its replacement has answered. A replacement is held to a third of the
// bound until its first answer; every reopen after a silence goes at once, while a stream that
// ends still backs off; a candidate still waiting is left alone. Timed on the client's fake
// clock; the streams run over a real HTTP/2 transport (bufconn), so the server sees a cancel as
// grpc-go sends it.

// silenceTTL is long enough that the requests every ttl/4, timed by the real clock, never come
// during a test: each is a request the test makes happen (the first, or a proclaim's).
const silenceTTL = 40 * time.Second

// slowRetry makes any backoff outlast recv's bound: a stream opened within it was not backed off.
var slowRetry = retrying(4, 20*time.Second, 20*time.Second)

// keptStreams serves each KeepAlive stream with a script of its own, in the order they are
// opened, so that a test answers on the stream it means and sees how each one ended (recvEnd:
// io.EOF for a half-close, CANCELED for a cancel).
type keptStreams struct {
	opened chan *streamScript
}

func newKeptStreams(f *fakeServer) *keptStreams {
	k := &keptStreams{opened: make(chan *streamScript, 64)}
	f.keepAlive = k.serve
	return k
}

func (k *keptStreams) serve(stream redlockv1.LockService_KeepAliveServer) error {
	st := &streamScript{reqs: make(chan *redlockv1.KeepAliveRequest, 64),
		answers: make(chan *redlockv1.KeepAliveResponse), end: make(chan error, 1), recvEnd: make(chan error, 1)}
	k.opened <- st
	return st.serve(stream)
}

// send hands v to a stream's handler, failing the test after recv's bound (no handler took it).
func send[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out handing over %s", what)
	}
}

// next is the next stream opened, with its first request.
func (k *keptStreams) next(t *testing.T, what string) (*streamScript, *redlockv1.KeepAliveRequest) {
	t.Helper()
	st := recv(t, k.opened, what)
	return st, recv(t, st.reqs, "the first request of "+what)
}

// noneOpened fails if a stream is opened within a moment.
func (k *keptStreams) noneOpened(t *testing.T, why string) {
	t.Helper()
	select {
	case <-k.opened:
		t.Fatalf("a stream was opened %s", why)
	case <-time.After(20 * time.Millisecond):
	}
}

// notEnded fails if st ends within a moment.
func notEnded(t *testing.T, st *streamScript, why string) {
	t.Helper()
	select {
	case err := <-st.recvEnd:
		t.Fatalf("a stream ended (%v) %s", err, why)
	case <-time.After(20 * time.Millisecond):
	}
}

// cancelled fails unless st ends with a cancel (a half-close would give the grant back).
func cancelled(t *testing.T, st *streamScript, what string) {
	t.Helper()
	if end := recv(t, st.recvEnd, "the end of "+what); errors.Is(end, io.EOF) || status.Code(end) != codes.Canceled {
		t.Fatalf("%s ended %v, want cancelled (a half-close would give the lease back)", what, end)
	}
}

// superseded is a lease kept on a stream whose first request was left unanswered for a quarter
// of the ttl: superseded at that moment, and its replacement opened.
type superseded struct {
	clk         *fakeClock
	l           *Lease
	k           *keptStreams
	silent      *streamScript
	replacement *streamScript
}

func supersededOnce(t *testing.T, opts ...Option) superseded {
	t.Helper()
	clk := newFakeClock()
	f := newFake()
	f.acquire = grants(silenceTTL)
	k := newKeptStreams(f)
	c := start(t, f, append([]Option{withClock(clk)}, opts...)...)
	l, err := c.Acquire(context.Background(), "orders/1", silenceTTL)
	if err != nil {
		t.Fatal(err)
	}
	token := recv(t, f.acquires, "Acquire").Token
	l.OnLost(func(err error) { t.Errorf("lost: %v", err) })
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	silent, first := k.next(t, "the first stream")
	if first.Sequence != 1 {
		t.Fatalf("first request: sequence %d", first.Sequence)
	}
	start := clk.Now()
	clk.set(start.Add(silenceTTL/4 - time.Nanosecond))
	k.noneOpened(t, "before a quarter of the ttl passed")
	clk.set(start.Add(silenceTTL / 4))
	replacement, r := k.next(t, "the replacement")
	if r.Token != token || r.Resource != "orders/1" || r.Sequence != 2 {
		t.Fatalf("replacement's first request: resource %q, sequence %d, same token %v", r.Resource, r.Sequence,
			r.Token == token)
	}
	return superseded{clk, l, k, silent, replacement}
}

func TestASilentStreamIsSupersededAndCancelledOnlyOnceItsReplacementAnswers(t *testing.T) {
	x := supersededOnce(t)
	notEnded(t, x.silent, "before its replacement answered")
	send(t, x.replacement.answers, answer(2, silenceTTL), "the replacement's answer")
	cancelled(t, x.silent, "the silent stream")
	if !x.l.Valid() || x.l.Err() != nil {
		t.Fatal("a silence cost the lease")
	}
}

func TestALateAnswerOnTheSilentStreamCounts(t *testing.T) {
	x := supersededOnce(t)
	sentFirst := x.clk.Now().Add(-silenceTTL / 4)
	send(t, x.silent.answers, answer(1, 2*silenceTTL), "a late answer on the silent stream")
	deadline := sentFirst.Add(2 * silenceTTL)
	for i := 0; !x.l.Deadline().Equal(deadline); i++ {
		if i == 500 {
			t.Fatalf("deadline %v, want the late answer's %v", x.l.Deadline(), deadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
	notEnded(t, x.silent, "for a late answer on it")
	notEnded(t, x.replacement, "for a late answer on the silent stream")
}

func TestAReplacementIsHeldToAThirdOfTheBoundAndEveryReopenAfterASilenceGoesAtOnce(t *testing.T) {
	x := supersededOnce(t, slowRetry)
	third := silenceTTL / 4 / replacementDivisor
	left := []*streamScript{x.silent}
	current := x.replacement
	for i := 0; i < 4; i++ {
		at := x.clk.Now() // the current stream's first request went out now
		x.clk.set(at.Add(third - time.Nanosecond))
		x.k.noneOpened(t, "within a third of the bound")
		x.clk.set(at.Add(third))
		// At once: slowRetry's backoff would outlast recv's bound.
		next, r := x.k.next(t, "a replacement of a replacement")
		if r.Sequence != uint64(3+i) {
			t.Fatalf("sequence %d, want %d", r.Sequence, 3+i)
		}
		left = append(left, current)
		current = next
	}
	for _, st := range left {
		notEnded(t, st, "before a replacement answered")
	}
	send(t, current.answers, answer(6, silenceTTL), "the last replacement's answer")
	for i, st := range left {
		cancelled(t, st, fmt.Sprintf("superseded stream %d", i+1))
	}
	// Answered: held to the whole bound again (from the answer's request, the oldest now answered,
	// to a request sent now).
	at := x.clk.Now()
	x.l.mu.Lock()
	k := x.l.keeper
	x.l.mu.Unlock()
	k.sendNow(nil)
	recv(t, current.reqs, "a request now")
	x.clk.set(at.Add(silenceTTL/4 - time.Nanosecond))
	x.k.noneOpened(t, "within the whole bound, once answered")
	x.clk.set(at.Add(silenceTTL / 4))
	x.k.next(t, "the next replacement")
	if !x.l.Valid() {
		t.Fatal("the lease went")
	}
}

// Issue 40: a stream that just moved (its replica shut down) has no answer of its own, and
// hundreds moved with it to replicas busy starting, which answer each of them late. Held to a
// quarter of its ttl, every one was replaced, and each replacement made the replicas slower still.
// The answers the client's other grants get say how slow.
func TestTheBoundFollowsTheSlowAnswersOfTheClientsOtherGrants(t *testing.T) {
	clk := newFakeClock()
	f := newFake()
	f.acquire = grants(silenceTTL)
	k := newKeptStreams(f)
	c := start(t, f, withClock(clk))
	var leases []*Lease
	for _, resource := range []string{"orders/slow", "orders/moved"} {
		l, err := c.Acquire(context.Background(), resource, silenceTTL)
		if err != nil {
			t.Fatal(err)
		}
		recv(t, f.acquires, "Acquire of "+resource)
		l.OnLost(func(err error) { t.Errorf("lost: %v", err) })
		leases = append(leases, l)
	}
	slow, moved := leases[0], leases[1]
	if err := slow.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	slowStream, _ := k.next(t, "the slow lease's stream")
	sent := clk.Now()
	clk.set(sent.Add(silenceTTL * 9 / 40)) // 0.9 of its bound (a quarter of the ttl)
	// A validity of two ttls: a deadline the Acquire's could not have been.
	send(t, slowStream.answers, answer(1, 2*silenceTTL), "the slow answer")
	for i := 0; !slow.Deadline().Equal(sent.Add(2 * silenceTTL)); i++ {
		if i == 500 {
			t.Fatal("the slow answer was not taken in")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := moved.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	k.next(t, "the moved lease's stream")
	at := clk.Now()
	// Past its own bound, within twice the client's slowest answer (faded by half every ttl).
	clk.set(at.Add(silenceTTL * 12 / 40))
	k.noneOpened(t, "within twice the client's slowest answer")
	clk.set(at.Add(silenceTTL * 19 / 40)) // the slowest faded to 0.65 of the bound
	replacement, r := k.next(t, "the replacement")
	if r.Resource != "orders/moved" {
		t.Fatalf("replaced %q", r.Resource)
	}
	send(t, replacement.answers, answer(r.Sequence, silenceTTL), "the replacement's answer")
	if !moved.Valid() {
		t.Fatal("the moved lease went")
	}
}

func TestAStreamThatEndsAfterASilenceStillBacksOff(t *testing.T) {
	x := supersededOnce(t, slowRetry)
	x.replacement.end <- status.Error(codes.Unavailable, "the replica is shutting down")
	x.k.noneOpened(t, "at once after a stream ended UNAVAILABLE (rule 14 backs off)")
	notEnded(t, x.silent, "when its replacement ended")
	if !x.l.Valid() {
		t.Fatal("the lease went")
	}
}

func TestACandidateStillWaitingIsLeftAloneButASilentLeaderIsSuperseded(t *testing.T) {
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
	select {
	case end := <-s.recvEnd:
		t.Fatalf("the silent stream ended (%v) before its replacement answered", end)
	case <-time.After(20 * time.Millisecond):
	}
	// Answers go to either stream's handler: the one that reaches the resumed stream has the
	// silent one cancelled (a half-close would resign).
	for i := 0; ; i++ {
		send(t, s.answers, campaignAnswer(resumed.Sequence, 3, "a", silenceTTL), "an answer")
		select {
		case end := <-s.recvEnd:
			if status.Code(end) != codes.Canceled {
				t.Fatalf("the silent stream ended %v, want cancelled", end)
			}
		case <-time.After(20 * time.Millisecond):
			if i == 100 {
				t.Fatal("the silent stream was never cancelled")
			}
			continue
		}
		break
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

func TestAReplacementThatReachedTheSilentReplicaMovesOnAfterAThirdOfTheBound(t *testing.T) {
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
		if _, err := c.Acquire(context.Background(), "orders/warm-up", silenceTTL); err != nil {
			t.Fatal(err)
		}
	}
	l, err := c.Acquire(context.Background(), "orders/1", silenceTTL)
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
		if _, err := c.Acquire(context.Background(), "orders/other", silenceTTL); err != nil {
			t.Fatal(err)
		}
		if acquired(other) > before {
			break
		}
		if i == 4 {
			t.Fatal("round_robin never took a call to the other replica")
		}
	}

	at := clk.Now()
	clk.set(at.Add(silenceTTL / 4)) // the first stream is superseded; its replacement goes to the silent replica
	if r := recv(t, silent.s.reqs, "the replacement's first request, on the silent replica"); r.Sequence != 2 {
		t.Fatalf("sequence %d, want 2", r.Sequence)
	}
	clk.set(at.Add(silenceTTL/4 + silenceTTL/4/replacementDivisor))
	r := recv(t, other.s.reqs, "the next replacement's first request, on the other replica")
	if r.Sequence != 3 {
		t.Fatalf("sequence %d, want 3", r.Sequence)
	}
	send(t, other.s.answers, answer(3, silenceTTL), "the other replica's answer")
	for i := 1; i <= 2; i++ {
		if end := recv(t, silent.s.recvEnd, "a silent stream's end"); errors.Is(end, io.EOF) || status.Code(end) != codes.Canceled {
			t.Fatalf("silent stream %d ended %v, want cancelled", i, end)
		}
	}
	if !l.Valid() {
		t.Fatal("the lease went")
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
	c := start(t, f, retrying(2, time.Millisecond, 5*time.Millisecond), WithCallTimeout(2*time.Second))
	var resets int32
	c.reconnect = func() { atomic.AddInt32(&resets, 1) }
	l, err := c.Acquire(context.Background(), "orders/1", silenceTTL)
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
	c := start(t, f, retrying(2, time.Millisecond, 5*time.Millisecond))
	c.releaseQuietly("orders/1", 0, "tttttttttttttttttttttttttttttttt")
	for i := 1; i <= 3; i++ {
		if r := recv(t, f.releases, "a Release"); r.Token != "tttttttttttttttttttttttttttttttt" {
			t.Fatal("a Release of another token")
		}
	}
}
