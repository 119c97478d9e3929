package redlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// streamScript is a KeepAlive handler the test drives: requests come out on reqs, answers go
// in on answers, an error on end ends the stream with it, and a client half-close ends it with
// onHalfClose (nil: OK). When the client's side of a stream ends, recvEnd gets how (io.EOF:
// half-closed; else cancelled).
type streamScript struct {
	reqs        chan *redlockv1.KeepAliveRequest
	answers     chan *redlockv1.KeepAliveResponse
	end         chan error
	recvEnd     chan error
	onHalfClose error
}

func newScript(f *fakeServer) *streamScript {
	s := &streamScript{
		reqs:    make(chan *redlockv1.KeepAliveRequest, 64),
		answers: make(chan *redlockv1.KeepAliveResponse),
		end:     make(chan error, 1),
		recvEnd: make(chan error, 16),
	}
	f.keepAlive = s.serve
	return s
}

func (s *streamScript) serve(stream redlockv1.LockService_KeepAliveServer) error {
	halfClosed := make(chan struct{})
	go func() {
		defer close(halfClosed)
		for {
			r, err := stream.Recv()
			if err != nil {
				select {
				case s.recvEnd <- err:
				default:
				}
				return
			}
			s.reqs <- r
		}
	}()
	for {
		select {
		case a := <-s.answers:
			if err := stream.Send(a); err != nil {
				return err
			}
		case err := <-s.end:
			return err
		case <-halfClosed:
			return s.onHalfClose
		}
	}
}

func answer(seq uint64, validity time.Duration) *redlockv1.KeepAliveResponse {
	return &redlockv1.KeepAliveResponse{
		Lease:    &redlockv1.Lease{Resource: "orders/1", Validity: durationpb.New(validity), FencingToken: 7},
		State:    redlockv1.LeaseState_LEASE_STATE_HELD,
		Sequence: seq,
	}
}

func TestKeepAliveMovesTheDeadlineOnlyByEchoedSequences(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	s := newScript(f)
	c := start(t, f)
	answered := make(chan struct{}, 16)
	c.testAnswered = func() { answered <- struct{}{} }
	l, err := c.Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d0 := l.Deadline()
	before := time.Now()
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	first := recv(t, s.reqs, "the first KeepAlive request")
	if first.Sequence != 1 || first.Token != recv(t, f.acquires, "Acquire").Token || first.Ttl.AsDuration() != 10*time.Second {
		t.Fatalf("first request: sequence %d, ttl %s", first.Sequence, first.Ttl.AsDuration())
	}

	s.answers <- answer(99, time.Minute) // a sequence never sent
	recv(t, answered, "the unknown answer taken in")
	if !l.Deadline().Equal(d0) {
		t.Fatal("an answer with an unknown sequence moved the deadline")
	}
	s.answers <- answer(1, 5*time.Second) // earlier than the deadline the lease has
	recv(t, answered, "the short answer taken in")
	if !l.Deadline().Equal(d0) {
		t.Fatal("an answer moved the deadline back")
	}
	s.answers <- answer(1, 20*time.Second)
	recv(t, answered, "the long answer taken in")
	if d := l.Deadline(); d.Before(before.Add(20*time.Second)) || d.After(after.Add(20*time.Second)) {
		t.Fatalf("deadline %s after KeepAlive began, want the send time of request 1 + 20s", d.Sub(before))
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
}

func TestKeepAliveSendsRisingSequences(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	s := newScript(f)
	l, err := start(t, f).Acquire(context.Background(), "orders/1", 40*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	if err := l.KeepAlive(); err != nil { // a no-op: one stream per lease
		t.Fatal(err)
	}
	for want := uint64(1); want <= 3; want++ { // one every ttl/4 = 10ms, each answered (else it is silent)
		r := recv(t, s.reqs, "a KeepAlive request")
		if r.Sequence != want || r.Resource != "orders/1" || r.Ttl.AsDuration() != 40*time.Millisecond {
			t.Fatalf("request %d: sequence %d, resource %q, ttl %s", want, r.Sequence, r.Resource, r.Ttl.AsDuration())
		}
		s.answers <- answer(r.Sequence, 10*time.Second)
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
}

func TestLossCallbackRunsOnceWhenTheStreamEndsNotFound(t *testing.T) {
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
	s.end <- status.Error(codes.NotFound, "resource 'orders/1' is not held")
	err = recv(t, lost, "the loss")
	if !errors.Is(err, ErrLeaseLost) || status.Code(err) != codes.NotFound {
		t.Fatalf("loss error %v (code %s), want ErrLeaseLost with NOT_FOUND", err, status.Code(err))
	}
	recv(t, l.Done(), "Done after the loss")
	if l.Valid() || l.Remaining() != 0 {
		t.Fatal("valid after the loss")
	}
	late := make(chan error, 1)
	l.OnLost(func(err error) { late <- err })
	if got := recv(t, late, "the callback registered after the loss"); got != err {
		t.Fatalf("late callback got %v", got)
	}
	// Further ways to lose it report nothing more.
	if eerr := l.Extend(context.Background(), time.Second); eerr != err {
		t.Fatalf("extend of a lost lease: %v", eerr)
	}
	l.life.checkExpiry()
	if n := atomic.LoadInt32(&calls); n != 1 || len(lost) != 0 {
		t.Fatalf("callback ran %d times", n)
	}
}

func TestStreamEndingOKUnaskedIsALoss(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	s := newScript(f)
	l, err := start(t, f).Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	recv(t, s.reqs, "the first request")
	s.end <- nil
	recv(t, l.Done(), "the loss")
	if err := l.Err(); !errors.Is(err, ErrLeaseLost) || status.Code(err) != codes.Unavailable {
		t.Fatalf("loss error %v", err)
	}
}

func TestReleaseOfAKeptLeaseHalfClosesItsStream(t *testing.T) {
	for _, tc := range []struct {
		name       string
		serverEnds error
		want       bool
		unary      bool // falls back to a Release call
	}{
		{"ok", nil, true, false},
		{"not found", status.Error(codes.NotFound, "not held"), false, false},
		{"internal", status.Error(codes.Internal, "boom"), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.acquire = grants(10 * time.Second)
			s := newScript(f)
			s.onHalfClose = tc.serverEnds
			l, err := start(t, f).Acquire(context.Background(), "orders/1", 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			lost := make(chan error, 1)
			l.OnLost(func(err error) { lost <- err })
			if err := l.KeepAlive(); err != nil {
				t.Fatal(err)
			}
			recv(t, s.reqs, "the first request")
			got, err := l.Release(context.Background())
			if got != tc.want || err != nil {
				t.Fatalf("release: %v, %v; want %v", got, err, tc.want)
			}
			if tc.unary {
				recv(t, f.releases, "the fallback Release")
			} else if len(f.releases) != 0 {
				t.Fatal("a Release call was made besides the half-close")
			}
			if len(lost) != 0 || l.Err() != nil {
				t.Fatal("the holder's own half-close counted as a loss")
			}
		})
	}
}

func TestWithLockCancelsTheWorkWhenTheLeaseIsLost(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	s := newScript(f)
	c := start(t, f)
	working := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.WithLock(context.Background(), "orders/1", 10*time.Second, func(ctx context.Context, l *Lease) error {
			close(working)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	recv(t, working, "the work")
	recv(t, s.reqs, "the keep-alive")
	s.end <- status.Error(codes.NotFound, "resource 'orders/1' was taken over")
	err := recv(t, done, "WithLock's return")
	if !errors.Is(err, ErrLeaseLost) || status.Code(err) != codes.NotFound {
		t.Fatalf("WithLock returned %v, want ErrLeaseLost with NOT_FOUND", err)
	}
	recv(t, f.releases, "the Release of the lost lease") // in case a minority still holds it
}

func TestWithLockReturnsTheWorksErrorAndReleases(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	s := newScript(f)
	halfClosed := make(chan struct{})
	f.keepAlive = func(stream redlockv1.LockService_KeepAliveServer) error {
		err := s.serve(stream)
		close(halfClosed)
		return err
	}
	boom := errors.New("boom")
	err := start(t, f).WithLock(context.Background(), "orders/1", 10*time.Second,
		func(ctx context.Context, l *Lease) error {
			if !l.Valid() || ctx.Err() != nil {
				t.Error("the work runs without a valid lease")
			}
			return boom
		})
	if err != boom {
		t.Fatalf("WithLock returned %v, want the work's error", err)
	}
	recv(t, halfClosed, "the release by half-close")
}
