package redlock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"redlockd.dev/go/redlockv1"
)

// Tests of rules 14 to 16: a kept stream that ends with anything but a loss is reopened with
// the same token (resume), every ttl change of a kept lease goes through its stream, and a
// client given several addresses resumes on another replica.

// leaseSentAt is when the kept lease l sent its request seq.
func leaseSentAt(t *testing.T, l *Lease, seq uint64) time.Time {
	t.Helper()
	l.mu.Lock()
	k := l.keeper
	l.mu.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.sent.at(seq)
	if !ok {
		t.Fatalf("request %d is not remembered", seq)
	}
	return at
}

// countStreams wraps f's KeepAlive handler to count the streams opened.
func countStreams(f *fakeServer) *int32 {
	var n int32
	inner := f.keepAlive
	f.keepAlive = func(stream redlockv1.LockService_KeepAliveServer) error {
		atomic.AddInt32(&n, 1)
		return inner(stream)
	}
	return &n
}

func TestKeepAliveResumesAfterUnavailableWithTheSameTokenAndNoLoss(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	s := newScript(f)
	streams := countStreams(f)
	c := start(t, f)
	answered := make(chan struct{}, 16)
	c.testAnswered = func() { answered <- struct{}{} }
	l, err := c.Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	token := recv(t, f.acquires, "Acquire").Token
	lost := make(chan error, 1)
	l.OnLost(func(err error) { lost <- err })
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, s.reqs, "the first request"); r.Sequence != 1 || r.Token != token {
		t.Fatalf("first request: sequence %d", r.Sequence)
	}
	s.answers <- answer(1, 10*time.Second)
	recv(t, answered, "the first answer taken in")
	before := l.Deadline()

	s.end <- status.Error(codes.Unavailable, "the server is shutting down")
	r := recv(t, s.reqs, "the first request of the reopened stream")
	if r.Token != token || r.Resource != "orders/1" || r.Sequence != 2 || r.Ttl.AsDuration() != 10*time.Second {
		t.Fatalf("reopened stream's first request: resource %q, sequence %d, ttl %s, same token %v",
			r.Resource, r.Sequence, r.Ttl.AsDuration(), r.Token == token)
	}
	if n := atomic.LoadInt32(streams); n != 2 {
		t.Fatalf("%d streams, want 2", n)
	}
	if !l.Deadline().Equal(before) || !l.Valid() {
		t.Fatal("the deadline moved (or the lease went) while the stream was down")
	}
	s.answers <- answer(2, 20*time.Second)
	recv(t, answered, "the resumed answer taken in")
	if d, want := l.Deadline(), leaseSentAt(t, l, 2).Add(20*time.Second); !d.Equal(want) {
		t.Fatalf("deadline %s after request 2, want 20s", d.Sub(leaseSentAt(t, l, 2)))
	}
	if l.FencingToken() != 7 || l.Err() != nil || len(lost) != 0 {
		t.Fatalf("after the resume: fencing token %d, err %v", l.FencingToken(), l.Err())
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if len(lost) != 0 || len(f.releases) != 0 {
		t.Fatal("a loss or a Release call after the resume")
	}
}

func TestNotFoundOnTheReopenedStreamIsALossOnce(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	s := newScript(f)
	l, err := start(t, f).Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var calls int32
	lost := make(chan error, 4)
	l.OnLost(func(err error) {
		atomic.AddInt32(&calls, 1)
		lost <- err
	})
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	recv(t, s.reqs, "the first request")
	s.end <- status.Error(codes.Unavailable, "connection reset")
	recv(t, s.reqs, "the reopened stream's request")
	s.end <- status.Error(codes.NotFound, "resource 'orders/1' is not held")
	err = recv(t, lost, "the loss")
	if !errors.Is(err, ErrLeaseLost) || status.Code(err) != codes.NotFound {
		t.Fatalf("loss %v (code %s), want ErrLeaseLost with NOT_FOUND", err, status.Code(err))
	}
	recv(t, f.releases, "the lease given back") // whatever a minority may still hold
	l.mu.Lock()
	k := l.keeper
	l.mu.Unlock()
	recv(t, k.final, "the renewals stopped") // nothing sends after this
	// The loss took the callbacks with it: nothing is left that could run them again.
	if n := atomic.LoadInt32(&calls); n != 1 || l.Valid() || l.Err() != err || len(l.life.callbacks) != 0 {
		t.Fatalf("%d loss calls, valid %v, Err %v", n, l.Valid(), l.Err())
	}
	select {
	case r := <-s.reqs:
		t.Fatalf("a request (sequence %d) after the loss", r.Sequence)
	default:
	}
}

func TestLossAtTheGuardedDeadlineWhenEveryReopenFails(t *testing.T) {
	f := newFake()
	const ttl = 600 * time.Millisecond // guard 30 ms
	f.acquire = grants(ttl)
	s := newScript(f)
	reopened := make(chan struct{}, 1024)
	var streams int32
	f.keepAlive = func(stream redlockv1.LockService_KeepAliveServer) error {
		if atomic.AddInt32(&streams, 1) == 1 {
			return s.serve(stream)
		}
		reopened <- struct{}{}
		return status.Error(codes.Unavailable, "shutting down")
	}
	clk := newFakeClock()
	l, err := start(t, f, fastRetry, withClock(clk)).Acquire(context.Background(), "orders/1", ttl)
	if err != nil {
		t.Fatal(err)
	}
	type loss struct {
		at  time.Time
		err error
	}
	var calls int32
	lost := make(chan loss, 4)
	l.OnLost(func(err error) {
		atomic.AddInt32(&calls, 1)
		lost <- loss{clk.Now(), err}
	})
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	recv(t, s.reqs, "the first request")
	s.end <- status.Error(codes.Unavailable, "shutting down")
	for i := 0; i < 3; i++ { // reopened again and again while the deadline is ahead
		recv(t, reopened, "a reopened stream")
	}
	if l.Err() != nil || !l.Valid() {
		t.Fatalf("lost while reopening with the deadline ahead: %v", l.Err())
	}
	deadline := l.Deadline()
	clk.set(deadline.Add(-guardFor(ttl))) // the guarded deadline: the timer runs on this goroutine
	got := recv(t, lost, "the loss")
	if !got.at.Before(deadline) || got.at.Before(deadline.Add(-guardFor(ttl))) {
		t.Fatalf("loss %s before the deadline, want within the guard (%s)", deadline.Sub(got.at), guardFor(ttl))
	}
	if !errors.Is(got.err, ErrLeaseLost) || status.Code(got.err) != codes.DeadlineExceeded {
		t.Fatalf("loss %v", got.err)
	}
	l.mu.Lock()
	k := l.keeper
	l.mu.Unlock()
	recv(t, k.final, "the reopening stopped") // no stream is opened after this
	if n := atomic.LoadInt32(&calls); n != 1 || l.Err() != got.err || len(l.life.callbacks) != 0 {
		t.Fatalf("after the loss: %d loss calls, Err %v", n, l.Err())
	}
}

func TestExtendOfAKeptLeaseGoesThroughTheStream(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	f.extend = func(context.Context, *redlockv1.ExtendRequest) (*redlockv1.ExtendResponse, error) {
		t.Error("a unary Extend of a kept lease")
		return nil, status.Error(codes.Internal, "no")
	}
	s := newScript(f)
	c := start(t, f)
	answered := make(chan struct{}, 16)
	c.testAnswered = func() { answered <- struct{}{} }
	l, err := c.Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	recv(t, s.reqs, "the first request")
	s.answers <- answer(1, 10*time.Second)
	recv(t, answered, "the first answer taken in")

	// Longer: the request carries the new ttl; an answer to an earlier request is ignored.
	extended := make(chan error, 1)
	go func() { extended <- l.Extend(context.Background(), 20*time.Second) }()
	r := recv(t, s.reqs, "the longer ttl's request")
	if r.Sequence != 2 || r.Ttl.AsDuration() != 20*time.Second {
		t.Fatalf("extend sent sequence %d, ttl %s", r.Sequence, r.Ttl.AsDuration())
	}
	before := l.Deadline()
	s.answers <- answer(1, 15*time.Second) // dated before the change
	recv(t, answered, "the earlier answer taken in")
	if !l.Deadline().Equal(before) {
		t.Fatal("an answer to a request sent before the ttl change moved the deadline")
	}
	select {
	case err := <-extended:
		t.Fatalf("Extend returned (%v) on an answer to an earlier request", err)
	default:
	}
	s.answers <- answer(2, 19*time.Second)
	if err := recv(t, extended, "Extend's return"); err != nil {
		t.Fatal(err)
	}
	sent2 := leaseSentAt(t, l, 2)
	if d := l.Deadline(); !d.Equal(sent2.Add(19 * time.Second)) {
		t.Fatalf("deadline %s after request 2, want 19s", d.Sub(sent2))
	}

	// Shorter: the deadline is cut at once, before any answer.
	go func() { extended <- l.Extend(context.Background(), time.Second) }()
	r = recv(t, s.reqs, "the shorter ttl's request")
	if r.Sequence != 3 || r.Ttl.AsDuration() != time.Second {
		t.Fatalf("extend sent sequence %d, ttl %s", r.Sequence, r.Ttl.AsDuration())
	}
	sent3 := leaseSentAt(t, l, 3)
	cut := sent3.Add(time.Second - 10*time.Millisecond - 2*time.Millisecond)
	if d := l.Deadline(); !d.Equal(cut) {
		t.Fatalf("deadline %s after the shorter ttl was sent, want %s", d.Sub(sent3), cut.Sub(sent3))
	}
	if rem := l.Remaining(); rem > 988*time.Millisecond-guardFor(time.Second) {
		t.Fatalf("remaining %s after the shorter ttl", rem)
	}
	s.answers <- answer(2, 19*time.Second) // a late answer to the longer ttl: ignored
	recv(t, answered, "the late answer taken in")
	if d := l.Deadline(); !d.Equal(cut) {
		t.Fatalf("a late answer to an earlier request moved the deadline to %s", d.Sub(sent3))
	}
	s.answers <- answer(3, 970*time.Millisecond)
	if err := recv(t, extended, "Extend's return"); err != nil {
		t.Fatal(err)
	}
	// Later requests carry the new ttl, every ttl/4 (not every 20s/4).
	r = recv(t, s.reqs, "a periodic request")
	if r.Sequence != 4 || r.Ttl.AsDuration() != time.Second {
		t.Fatalf("periodic request: sequence %d, ttl %s", r.Sequence, r.Ttl.AsDuration())
	}
	if gap := leaseSentAt(t, l, 4).Sub(sent3); gap > time.Second {
		t.Fatalf("the next request went %s after the ttl change, want about 250ms", gap)
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
}

func TestResumedCampaignSendsItsTokenWithResumeAndKeepsTheTerm(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	answered := make(chan struct{}, 64)
	c.testAnswered = func() { answered <- struct{}{} }

	// A candidate still waiting campaigns again with the same token, resume = false.
	done := campaignAsync(context.Background(), c, "a", 10*time.Second)
	first := recv(t, s.reqs, "the first Campaign request")
	if len(first.Token) != 32 || first.Resume {
		t.Fatalf("first request: token of %d characters, resume %v", len(first.Token), first.Resume)
	}
	s.end <- status.Error(codes.Unavailable, "the server is shutting down")
	again := recv(t, s.reqs, "the waiting candidate's new stream")
	if again.Token != first.Token || again.Resume || again.Sequence <= first.Sequence || again.Value != "a" {
		t.Fatalf("waiting candidate's new stream: same token %v, resume %v, sequence %d", again.Token == first.Token,
			again.Resume, again.Sequence)
	}
	s.answers <- campaignAnswer(again.Sequence, 5, "a", 10*time.Second)
	res := recv(t, done, "Campaign's return")
	if res.err != nil {
		t.Fatal(res.err)
	}
	l := res.l
	recv(t, answered, "the first answer taken in")
	lost := make(chan error, 1)
	l.OnLost(func(err error) { lost <- err })

	// A leader resumes with the same token and resume = true, and keeps its term.
	before := l.Deadline()
	s.end <- status.Error(codes.Unavailable, "the server is shutting down")
	var resumed *redlockv1.CampaignRequest
	for resumed == nil {
		r := recv(t, s.reqs, "the leader's new stream")
		if r.Resume {
			resumed = r
		}
	}
	if resumed.Token != first.Token || resumed.Election != "jobs" || resumed.Value != "a" ||
		resumed.Ttl.AsDuration() != 10*time.Second || resumed.Sequence <= again.Sequence {
		t.Fatalf("resumed request: same token %v, election %q, value %q, ttl %s, sequence %d",
			resumed.Token == first.Token, resumed.Election, resumed.Value, resumed.Ttl.AsDuration(), resumed.Sequence)
	}
	if !l.Deadline().Equal(before) || !l.IsLeader() {
		t.Fatal("the deadline moved (or the leadership went) while the stream was down")
	}
	s.answers <- campaignAnswer(resumed.Sequence, 5, "a", 10*time.Second)
	recv(t, answered, "the resumed answer taken in")
	if d, want := l.Deadline(), sentAt(t, l, resumed.Sequence).Add(10*time.Second); !d.Equal(want) {
		t.Fatalf("deadline %s after the resumed request, want 10s", d.Sub(sentAt(t, l, resumed.Sequence)))
	}
	if l.Term() != 5 || !l.IsLeader() || len(lost) != 0 {
		t.Fatalf("after the resume: %s, lost %d", l, len(lost))
	}
	// A resumed leadership that the server no longer holds ends NOT_FOUND: a loss, once.
	s.end <- status.Error(codes.Unavailable, "connection reset")
	recv(t, s.reqs, "the next resume")
	s.end <- status.Error(codes.NotFound, "election 'jobs' is not led with this token")
	if err := recv(t, lost, "the loss"); !errors.Is(err, ErrLeaseLost) || status.Code(err) != codes.NotFound {
		t.Fatalf("loss %v", err)
	}
	if l.IsLeader() {
		t.Fatal("leader after the loss")
	}
}

func TestResignWhileTheStreamIsDownReopensToHalfClose(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	var streams int32
	e.campaign = func(stream redlockv1.ElectionService_CampaignServer) error {
		if atomic.AddInt32(&streams, 1) == 2 {
			return status.Error(codes.Unavailable, "still shutting down")
		}
		return s.serve(stream)
	}
	l := lead(t, startElections(t, e, retrying(4, 100*time.Millisecond, 100*time.Millisecond)), s, 10*time.Second, 10*time.Second)
	s.end <- status.Error(codes.Unavailable, "the server is shutting down")
	for atomic.LoadInt32(&streams) < 2 {
		time.Sleep(time.Millisecond)
	}
	ok, err := l.Resign(context.Background()) // the third stream carries the half-close
	if !ok || err != nil {
		t.Fatalf("resign: %v, %v", ok, err)
	}
	var last *redlockv1.CampaignRequest
	for len(s.reqs) > 0 {
		last = <-s.reqs
	}
	if last == nil || !last.Resume {
		t.Fatalf("the half-closed stream did not resume first: %v", last)
	}
}

// replicas serves one fake LockService per name over in-memory listeners and dials them all
// with Dial (round_robin), as a client given several addresses does.
type replicas struct {
	lis      map[string]*bufconn.Listener
	srv      map[string]*grpc.Server
	conn     *grpc.ClientConn
	mu       sync.Mutex
	calls    []string // "<replica> <stream n> <sequence> <token>" per KeepAlive request
	reqs     chan string
	acquires chan string // the replica of each Acquire
}

func startReplicas(t *testing.T, names ...string) *replicas {
	t.Helper()
	rs := &replicas{lis: map[string]*bufconn.Listener{}, srv: map[string]*grpc.Server{}, reqs: make(chan string, 256),
		acquires: make(chan string, 256)}
	var streams int32
	for _, name := range names {
		name := name
		f := newFake()
		f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, _ int) (*redlockv1.AcquireResponse, error) {
			rs.acquires <- name
			return grant(req, 2*time.Second, 7), nil
		}
		f.keepAlive = func(stream redlockv1.LockService_KeepAliveServer) error {
			n := atomic.AddInt32(&streams, 1)
			for {
				r, err := stream.Recv()
				if err != nil {
					return nil
				}
				rs.reqs <- fmt.Sprintf("%s %d %d %s", name, n, r.Sequence, r.Token)
				if err := stream.Send(answer(r.Sequence, r.Ttl.AsDuration())); err != nil {
					return err
				}
			}
		}
		rs.lis[name] = bufconn.Listen(1 << 20)
		rs.srv[name] = grpc.NewServer(grpc.CustomCodec(protoCodec{}))
		redlockv1.RegisterLockServiceServer(rs.srv[name], f)
		go func(s *grpc.Server, l *bufconn.Listener) { _ = s.Serve(l) }(rs.srv[name], rs.lis[name])
	}
	conn, err := Dial(context.Background(), names, grpc.WithInsecure(),
		grpc.WithContextDialer(func(_ context.Context, addr string) (net.Conn, error) {
			l, ok := rs.lis[addr]
			if !ok {
				return nil, fmt.Errorf("no replica %q", addr)
			}
			return l.Dial()
		}))
	if err != nil {
		t.Fatal(err)
	}
	rs.conn = conn
	t.Cleanup(func() {
		conn.Close()
		for _, s := range rs.srv {
			s.Stop()
		}
	})
	return rs
}

func TestTwoAddressesOneStopsTheStreamResumesOnTheOther(t *testing.T) {
	rs := startReplicas(t, "replica-a:1", "replica-b:2")
	c := New(rs.conn)
	answered := make(chan struct{}, 256)
	c.testAnswered = func() { answered <- struct{}{} }
	l, err := c.Acquire(context.Background(), "orders/1", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	l.OnLost(func(err error) { lost <- err })
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	var first, firstToken string
	var firstStream int
	var seq uint64
	if _, err := fmt.Sscanf(recv(t, rs.reqs, "the first request"), "%s %d %d %s", &first, &firstStream, &seq, &firstToken); err != nil {
		t.Fatal(err)
	}
	rs.srv[first].Stop() // the replica the stream uses goes away
	limit := time.After(5 * time.Second)
	for {
		var replica, token string
		var n int
		select {
		case line := <-rs.reqs:
			if _, err := fmt.Sscanf(line, "%s %d %d %s", &replica, &n, &seq, &token); err != nil {
				t.Fatal(err)
			}
		case <-limit:
			t.Fatal("the stream did not resume on the other replica")
		}
		if replica == first {
			continue
		}
		if token != firstToken || n == firstStream {
			t.Fatalf("resumed on %s: same token %v, stream %d", replica, token == firstToken, n)
		}
		break
	}
	// The resumed stream's answer (to seq, or a later request) has been taken in once the
	// deadline is at least seq's send time + the validity (2 s): earlier answers date earlier.
	l.mu.Lock()
	k := l.keeper
	l.mu.Unlock()
	k.mu.Lock()
	resumedAt, ok := k.sent.at(seq)
	k.mu.Unlock()
	if !ok {
		t.Fatalf("request %d is not remembered", seq)
	}
	for l.Deadline().Before(resumedAt.Add(2 * time.Second)) {
		recv(t, answered, "the resumed stream's answer taken in")
	}
	if !l.Valid() || len(lost) != 0 || l.FencingToken() != 7 {
		t.Fatalf("after the resume: valid %v, lost %d", l.Valid(), len(lost))
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
}

func TestDialSpreadsCallsOverEveryAddress(t *testing.T) {
	rs := startReplicas(t, "replica-a:1", "replica-b:2")
	c := New(rs.conn)
	seen := map[string]bool{}
	// Round robin picks among the replicas that are ready: the second may still be connecting.
	for limit := time.Now().Add(5 * time.Second); len(seen) < 2 && time.Now().Before(limit); time.Sleep(5 * time.Millisecond) {
		if _, err := c.Acquire(context.Background(), "orders/1", 2*time.Second); err != nil {
			t.Fatal(err)
		}
		seen[recv(t, rs.acquires, "an Acquire")] = true
	}
	if len(seen) != 2 {
		t.Fatalf("calls went to %v only", seen)
	}
	if _, err := Dial(context.Background(), nil); err == nil {
		t.Fatal("Dial with no address")
	}
}

func TestAWaitingCandidateCampaignsAgainThenFailsWithTheStreamsStatus(t *testing.T) {
	e := &fakeElections{}
	var streams int32
	tokens := make(chan string, 16)
	e.campaign = func(stream redlockv1.ElectionService_CampaignServer) error {
		atomic.AddInt32(&streams, 1)
		r, err := stream.Recv()
		if err != nil {
			return err
		}
		tokens <- r.Token
		return status.Error(codes.Unavailable, "the server is shutting down")
	}
	c := startElections(t, e, fastRetry)
	l, err := c.Campaign(context.Background(), "jobs", 10*time.Second, WithValue("a"))
	if l != nil || status.Code(err) != codes.Unavailable || errors.Is(err, ErrNotAcquired) {
		t.Fatalf("got %v, %v; want UNAVAILABLE", l, err)
	}
	if n := atomic.LoadInt32(&streams); n != 4 {
		t.Fatalf("%d streams, want 4 (the retry policy's attempts)", n)
	}
	first := <-tokens
	for len(tokens) > 0 {
		if tok := <-tokens; tok != first {
			t.Fatal("a new stream came with another token")
		}
	}
}
