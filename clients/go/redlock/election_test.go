package redlock

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// fakeElections is an ElectionService whose answers each test scripts.
type fakeElections struct {
	redlockv1.UnimplementedElectionServiceServer
	campaign func(stream redlockv1.ElectionService_CampaignServer) error
	leader   func(ctx context.Context, req *redlockv1.LeaderRequest, n int) (*redlockv1.LeaderResponse, error)
	observe  func(req *redlockv1.ObserveRequest, stream redlockv1.ElectionService_ObserveServer, n int) error

	leaderN, observeN int32 // calls so far (atomic)
}

func (e *fakeElections) Campaign(stream redlockv1.ElectionService_CampaignServer) error {
	return e.campaign(stream)
}

func (e *fakeElections) Leader(ctx context.Context, req *redlockv1.LeaderRequest) (*redlockv1.LeaderResponse, error) {
	return e.leader(ctx, req, int(atomic.AddInt32(&e.leaderN, 1)))
}

func (e *fakeElections) Observe(req *redlockv1.ObserveRequest, stream redlockv1.ElectionService_ObserveServer) error {
	return e.observe(req, stream, int(atomic.AddInt32(&e.observeN, 1)))
}

// startElections serves e (and a LockService nobody calls) and returns a client on it.
func startElections(t *testing.T, e *fakeElections, opts ...Option) *Client {
	t.Helper()
	f := newFake()
	f.elections = e
	return start(t, f, opts...)
}

// campaignScript is a Campaign handler the test drives, like streamScript: requests come out on
// reqs, answers go in on answers, an error on end ends the stream with it. When the client's
// side ends, recvEnd gets how (io.EOF: half-closed) and the stream ends with onHalfClose.
type campaignScript struct {
	reqs        chan *redlockv1.CampaignRequest
	answers     chan *redlockv1.CampaignResponse
	end         chan error
	recvEnd     chan error
	onHalfClose error
}

func newCampaignScript(e *fakeElections) *campaignScript {
	s := &campaignScript{
		reqs:    make(chan *redlockv1.CampaignRequest, 1024),
		answers: make(chan *redlockv1.CampaignResponse),
		end:     make(chan error, 1),
		recvEnd: make(chan error, 1),
	}
	e.campaign = s.serve
	return s
}

func (s *campaignScript) serve(stream redlockv1.ElectionService_CampaignServer) error {
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			r, err := stream.Recv()
			if err != nil {
				select {
				case s.recvEnd <- err:
				default: // an earlier stream's end is still there
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
		case <-gone:
			return s.onHalfClose
		}
	}
}

func campaignAnswer(seq, term uint64, value string, validity time.Duration) *redlockv1.CampaignResponse {
	return &redlockv1.CampaignResponse{Term: term, Value: value, Validity: durationpb.New(validity),
		State: redlockv1.LeaseState_LEASE_STATE_HELD, Sequence: seq}
}

type campaignResult struct {
	l   *Leadership
	err error
}

// campaignAsync starts a Campaign and returns where its outcome will arrive.
func campaignAsync(ctx context.Context, c *Client, value string, ttl time.Duration) <-chan campaignResult {
	done := make(chan campaignResult, 1)
	go func() {
		l, err := c.Campaign(ctx, "jobs", ttl, WithValue(value))
		done <- campaignResult{l, err}
	}()
	return done
}

// lead runs a Campaign that the script grants at once (term 5, value "a") with validity.
func lead(t *testing.T, c *Client, s *campaignScript, ttl, validity time.Duration) *Leadership {
	t.Helper()
	done := campaignAsync(context.Background(), c, "a", ttl)
	first := recv(t, s.reqs, "the first Campaign request")
	s.answers <- campaignAnswer(first.Sequence, 5, "a", validity)
	res := recv(t, done, "Campaign's return")
	if res.err != nil {
		t.Fatal(res.err)
	}
	return res.l
}

// sentAt is when l sent its request seq.
func sentAt(t *testing.T, l *Leadership, seq uint64) time.Time {
	t.Helper()
	l.ks.mu.Lock()
	defer l.ks.mu.Unlock()
	at, ok := l.ks.sent.at(seq)
	if !ok {
		t.Fatalf("request %d is not remembered", seq)
	}
	return at
}

func deadlineOf(l *Leadership) time.Time { return l.Deadline() }

func TestCampaignSendsWhileWaitingAndDatesItsLeadershipByTheEchoedSequence(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	answered := make(chan struct{}, 64)
	c.testAnswered = func() { answered <- struct{}{} }
	const ttl = 400 * time.Millisecond // a request every 100 ms
	done := campaignAsync(context.Background(), c, "a", ttl)
	for want := uint64(1); want <= 3; want++ {
		r := recv(t, s.reqs, "a Campaign request while waiting")
		if r.Sequence != want || r.Election != "jobs" || r.Value != "a" || r.Ttl.AsDuration() != ttl {
			t.Fatalf("request %d: sequence %d, election %q, value %q, ttl %s", want, r.Sequence, r.Election,
				r.Value, r.Ttl.AsDuration())
		}
	}

	s.answers <- campaignAnswer(999, 5, "a", 10*time.Second) // a sequence never sent
	recv(t, answered, "the undatable answer taken in")
	select {
	case res := <-done:
		t.Fatalf("Campaign returned on an answer it cannot date: %v, %v", res.l, res.err)
	default:
	}

	s.answers <- campaignAnswer(2, 5, "a", 10*time.Second)
	res := recv(t, done, "Campaign's return")
	recv(t, answered, "the first answer taken in")
	if res.err != nil {
		t.Fatal(res.err)
	}
	l := res.l
	if d, want := deadlineOf(l), sentAt(t, l, 2).Add(10*time.Second); !d.Equal(want) {
		t.Fatalf("deadline %s after request 2 was sent, want 10s", d.Sub(sentAt(t, l, 2)))
	}
	if l.Term() != 5 || l.Value() != "a" || !l.IsLeader() || l.Election() != "jobs" {
		t.Fatalf("leadership %s", l)
	}

	d0 := deadlineOf(l)
	s.answers <- campaignAnswer(999, 5, "a", time.Minute)
	recv(t, answered, "the unknown answer taken in")
	if !deadlineOf(l).Equal(d0) {
		t.Fatal("an answer with an unknown sequence moved the deadline")
	}
	s.answers <- campaignAnswer(1, 5, "a", 5*time.Second) // earlier than the deadline it has
	recv(t, answered, "the short answer taken in")
	if !deadlineOf(l).Equal(d0) {
		t.Fatal("an answer moved the deadline back")
	}
	s.answers <- campaignAnswer(3, 5, "a", 20*time.Second)
	recv(t, answered, "the long answer taken in")
	if d, want := deadlineOf(l), sentAt(t, l, 3).Add(20*time.Second); !d.Equal(want) {
		t.Fatalf("deadline %s after request 3 was sent, want 20s", d.Sub(sentAt(t, l, 3)))
	}
	// Renewals keep coming with rising sequences once leading.
	last := uint64(3)
	for i := 0; i < 2; i++ {
		r := recv(t, s.reqs, "a renewal request")
		if r.Sequence <= last || r.Value != "a" {
			t.Fatalf("renewal: sequence %d after %d, value %q", r.Sequence, last, r.Value)
		}
		last = r.Sequence
	}
	if ok, err := l.Resign(context.Background()); !ok || err != nil {
		t.Fatalf("resign: %v, %v", ok, err)
	}
}

func TestLeadershipIsLostOnceWhenItsGuardedDeadlinePasses(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	clk := newFakeClock()
	c := startElections(t, e, withClock(clk))
	const ttl, validity = time.Second, 300 * time.Millisecond // guard 50 ms; renewals unanswered
	l := lead(t, c, s, ttl, validity)
	if !l.IsLeader() {
		t.Fatal("not leader after the grant")
	}
	var calls int32
	lost := make(chan error, 4)
	l.OnLost(func(err error) {
		atomic.AddInt32(&calls, 1)
		lost <- err
	})
	deadline := deadlineOf(l)
	clk.set(deadline.Add(-guardFor(ttl) - time.Nanosecond))
	if !l.IsLeader() || l.Err() != nil || len(lost) != 0 {
		t.Fatalf("lost a nanosecond before the guarded deadline: %v", l.Err())
	}
	clk.set(deadline.Add(-guardFor(ttl))) // runs the timer, on this goroutine
	if l.IsLeader() || !errors.Is(l.Err(), ErrLeaseLost) {
		t.Fatalf("at the guarded deadline: leader %t, err %v", l.IsLeader(), l.Err())
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("Done not closed by the loss")
	}
	got := struct{ err error }{recv(t, lost, "the loss by the timer")}
	if got.err != l.Err() {
		t.Fatalf("callback got %v, Err is %v", got.err, l.Err())
	}
	if !errors.Is(got.err, ErrLeaseLost) || status.Code(got.err) != codes.DeadlineExceeded ||
		!strings.Contains(got.err.Error(), "leadership lost") {
		t.Fatalf("loss error %v", got.err)
	}
	if l.IsLeader() {
		t.Fatal("still leader after the loss")
	}
	// The client gives up what the server may still hold: it half-closes.
	if err := recv(t, s.recvEnd, "the half-close after the loss"); err != io.EOF {
		t.Fatalf("the stream ended by %v, want a half-close", err)
	}
	l.life.lose(lostError("leadership", "jobs", status.New(codes.NotFound, "again"), nil), false)
	if ok, err := l.Resign(context.Background()); ok || err != nil {
		t.Fatalf("resign of a lost leadership: %v, %v", ok, err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close of a lost leadership: %v", err)
	}
	// The second loss was not recorded (Err is still the first) and the callbacks were taken
	// by the first: nothing is left that could run them again.
	if l.Err() != got.err || len(l.life.callbacks) != 0 {
		t.Fatalf("a second loss was recorded: %v", l.Err())
	}
	if n := atomic.LoadInt32(&calls); n != 1 || len(lost) != 0 {
		t.Fatalf("callback ran %d times", n)
	}
}

func TestIsLeaderIsFalseWithinTheGuard(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	clk := newFakeClock()
	const ttl = time.Second // guard 50 ms
	l := lead(t, startElections(t, e, withClock(clk)), s, ttl, 300*time.Millisecond)
	l.life.mu.Lock()
	l.life.expiry.Stop() // no loss reported: IsLeader alone must tell
	deadline := l.life.deadline
	l.life.mu.Unlock()
	guarded := deadline.Add(-guardFor(ttl))
	clk.set(guarded.Add(-time.Millisecond))
	if !l.IsLeader() || l.Remaining() != time.Millisecond {
		t.Fatalf("1ms before the guarded deadline: leader %t, remaining %s", l.IsLeader(), l.Remaining())
	}
	clk.set(deadline.Add(-guardFor(ttl) / 2))
	if l.IsLeader() || l.Remaining() != 0 {
		t.Fatalf("leader (remaining %s) %s before the deadline, within the guard of %s", l.Remaining(),
			deadline.Sub(clk.Now()), guardFor(ttl))
	}
	if l.Err() != nil {
		t.Fatalf("a loss was reported without the timer: %v", l.Err())
	}
}

func TestLeadershipIsLostOnceWhenItsStreamEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  error
		want codes.Code
	}{
		{"not found", status.Error(codes.NotFound, "election 'jobs' was taken over"), codes.NotFound},
		{"permission denied", status.Error(codes.PermissionDenied, "not allowed"), codes.PermissionDenied},
		{"ok unasked", nil, codes.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeElections{}
			s := newCampaignScript(e)
			l := lead(t, startElections(t, e), s, 10*time.Second, 10*time.Second)
			var calls int32
			lost := make(chan error, 4)
			l.OnLost(func(err error) {
				atomic.AddInt32(&calls, 1)
				lost <- err
			})
			s.end <- tc.end
			err := recv(t, lost, "the loss")
			if !errors.Is(err, ErrLeaseLost) || status.Code(err) != tc.want {
				t.Fatalf("loss error %v (code %s), want ErrLeaseLost with %s", err, status.Code(err), tc.want)
			}
			if l.IsLeader() {
				t.Fatal("still leader after the loss")
			}
			recv(t, l.ks.final, "the renewals stopped")
			late := make(chan error, 1)
			l.OnLost(func(err error) { late <- err })
			if got := recv(t, late, "the callback registered after the loss"); got != err {
				t.Fatalf("late callback got %v", got)
			}
			// A second way to lose it (the timer) changes nothing.
			l.life.lose(lostError("leadership", "jobs", status.New(codes.DeadlineExceeded, "again"), nil), false)
			if perr := l.Proclaim(context.Background(), "a2"); perr != err {
				t.Fatalf("proclaim on a lost leadership: %v, want the first loss", perr)
			}
			if ok, rerr := l.Resign(context.Background()); ok || rerr != nil {
				t.Fatalf("resign of a lost leadership: %v, %v", ok, rerr)
			}
			// The second loss was not recorded and the first took the callbacks with it.
			if l.Err() != err || len(l.life.callbacks) != 0 {
				t.Fatalf("a second loss was recorded: %v", l.Err())
			}
			if n := atomic.LoadInt32(&calls); n != 1 || len(lost) != 0 {
				t.Fatalf("callback ran %d times", n)
			}
		})
	}
}

func TestResignHalfClosesOnceAndReportsNoLoss(t *testing.T) {
	for _, tc := range []struct {
		name       string
		serverEnds error
		want       bool
		wantErr    codes.Code
	}{
		{"ok", nil, true, codes.OK},
		{"not found", status.Error(codes.NotFound, "not held"), false, codes.OK},
		{"internal", status.Error(codes.Internal, "boom"), false, codes.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeElections{}
			s := newCampaignScript(e)
			s.onHalfClose = tc.serverEnds
			const validity = 300 * time.Millisecond // the timer would report a loss after it
			clk := newFakeClock()
			l := lead(t, startElections(t, e, withClock(clk)), s, time.Second, validity)
			lost := make(chan error, 1)
			l.OnLost(func(err error) { lost <- err })
			if l.Err() != nil {
				t.Fatalf("Err while leading: %v", l.Err())
			}
			type resigned struct {
				ok  bool
				err error
			}
			done := make(chan resigned, 1)
			go func() {
				ok, err := l.Resign(context.Background())
				done <- resigned{ok, err}
			}()
			if end := recv(t, s.recvEnd, "the half-close"); end != io.EOF {
				t.Fatalf("the stream ended by %v, want a half-close", end)
			}
			// Past the deadline: a stream that ended otherwise than OK or NOT_FOUND is not
			// reopened to carry the half-close again (the leadership has run out).
			clk.set(deadlineOf(l))
			res := recv(t, done, "Resign's return")
			if got, err := res.ok, res.err; got != tc.want || status.Code(err) != tc.wantErr {
				t.Fatalf("resign: %v, %v; want %v, %s", got, err, tc.want, tc.wantErr)
			}
			if l.IsLeader() {
				t.Fatal("leader after resigning")
			}
			if again, err := l.Resign(context.Background()); again || err != nil {
				t.Fatalf("second resign: %v, %v; want false, nil", again, err)
			}
			if err := l.Close(); err != nil {
				t.Fatalf("close after resign: %v", err)
			}
			if err := l.Proclaim(context.Background(), "a2"); status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("proclaim after resign: %v", err)
			}
			select {
			case <-l.Done():
			default:
				t.Fatal("Done not closed by the resign")
			}
			clk.set(deadlineOf(l).Add(validity)) // runs any timer still armed
			l.life.checkExpiry()
			if l.Err() != ErrResigned || l.life.lossErr() != nil || len(lost) != 0 {
				t.Fatalf("after the resign and the deadline: Err %v, loss %v", l.Err(), l.life.lossErr())
			}
		})
	}
}

func TestCloseResigns(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	l := lead(t, startElections(t, e), s, 10*time.Second, 10*time.Second)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if end := recv(t, s.recvEnd, "the half-close"); end != io.EOF {
		t.Fatalf("the stream ended by %v, want a half-close", end)
	}
	if ok, _ := l.Resign(context.Background()); ok || l.IsLeader() {
		t.Fatal("Close did not resign")
	}
}

func TestProclaimReturnsWhenAnAnswerShowsTheValue(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	answered := make(chan struct{}, 64)
	c.testAnswered = func() { answered <- struct{}{} }
	l := lead(t, c, s, 10*time.Second, 10*time.Second)
	recv(t, answered, "the first answer taken in")

	done := make(chan error, 1)
	go func() { done <- l.Proclaim(context.Background(), "a2") }()
	r := recv(t, s.reqs, "the proclaiming request")
	if r.Value != "a2" || r.Sequence != 2 || r.Election != "jobs" || r.Ttl.AsDuration() != 10*time.Second {
		t.Fatalf("proclaim sent value %q, sequence %d, election %q, ttl %s", r.Value, r.Sequence, r.Election,
			r.Ttl.AsDuration())
	}
	s.answers <- campaignAnswer(2, 5, "a", 10*time.Second) // a renewal that crossed it
	recv(t, answered, "the old value's answer taken in")
	select {
	case err := <-done:
		t.Fatalf("Proclaim returned (%v) before an answer showed the value", err)
	default:
	}
	s.answers <- campaignAnswer(2, 5, "a2", 10*time.Second)
	if err := recv(t, done, "Proclaim's return"); err != nil {
		t.Fatal(err)
	}
	if l.Value() != "a2" || l.Term() != 5 {
		t.Fatalf("after proclaim: value %q, term %d", l.Value(), l.Term())
	}
	if ok, err := l.Resign(context.Background()); !ok || err != nil {
		t.Fatalf("resign: %v, %v", ok, err)
	}
}

func TestTheTermFollowsARenewalThatReportsAHigherOneAndNeverFalls(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	answered := make(chan struct{}, 64)
	c.testAnswered = func() { answered <- struct{}{} }
	l := lead(t, c, s, 10*time.Second, 10*time.Second)
	recv(t, answered, "the first answer taken in")
	s.answers <- campaignAnswer(1, 9, "a", 10*time.Second) // a renewal after a node fault
	recv(t, answered, "the higher term taken in")
	if l.Term() != 9 {
		t.Fatalf("term %d after a renewal reported 9", l.Term())
	}
	s.answers <- campaignAnswer(1, 5, "a", 10*time.Second) // an older report, arriving late
	recv(t, answered, "the lower term taken in")
	if l.Term() != 9 {
		t.Fatalf("term fell to %d", l.Term())
	}
	if ok, err := l.Resign(context.Background()); !ok || err != nil {
		t.Fatalf("resign: %v, %v", ok, err)
	}
}

func TestProclaimFailsWhenTheLeadershipIsLostFirst(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	l := lead(t, startElections(t, e), s, 10*time.Second, 10*time.Second)
	done := make(chan error, 1)
	go func() { done <- l.Proclaim(context.Background(), "a2") }()
	recv(t, s.reqs, "the proclaiming request")
	s.end <- status.Error(codes.NotFound, "election 'jobs' was taken over")
	err := recv(t, done, "Proclaim's return")
	if !errors.Is(err, ErrLeaseLost) || status.Code(err) != codes.NotFound {
		t.Fatalf("proclaim: %v, want the loss with NOT_FOUND", err)
	}
}

func TestProclaimIsBoundedByTheCallTimeout(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	// 1 s, not less: the timeout bounds the Campaign that opens the client's first stream too, and
	// under -race beside the suite's other builds 100 ms ran out before that stream was open.
	const callTimeout = time.Second
	l := lead(t, startElections(t, e, WithCallTimeout(callTimeout)), s, 10*time.Second, 10*time.Second)
	began := time.Now()
	err := l.Proclaim(context.Background(), "a2")
	if status.Code(err) != codes.DeadlineExceeded || time.Since(began) < callTimeout {
		t.Fatalf("proclaim without an answer: %v after %s", err, time.Since(began))
	}
	if !l.IsLeader() {
		t.Fatal("a proclaim that timed out cost the leadership")
	}
}

func TestCampaignWaitRunningOutWithdrawsAndIsNotAcquired(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// The wait is the context's: its deadline, not 100 ms from a clock reading taken after the
	// context was made (a goroutine descheduled between the two made that reading late).
	deadline, _ := ctx.Deadline()
	l, err := c.Campaign(ctx, "jobs", 2*time.Second, WithValue("c"))
	if l != nil || !errors.Is(err, ErrNotAcquired) || status.Code(err) != codes.Aborted {
		t.Fatalf("got %v, %v (code %s); want ErrNotAcquired with ABORTED", l, err, status.Code(err))
	}
	if early := time.Until(deadline); early > 0 {
		t.Fatalf("gave up %v before the wait ran out", early)
	}
	var re *Error
	if !errors.As(err, &re) || re.Op != "campaign" || re.Resource != "jobs" {
		t.Fatalf("got %#v, want a *Error naming the election", err)
	}
	if end := recv(t, s.recvEnd, "the withdrawal"); end != io.EOF {
		t.Fatalf("the candidacy ended by %v, want a half-close", end)
	}
	if r := recv(t, s.reqs, "the first request"); r.Value != "c" || r.Sequence != 1 {
		t.Fatalf("first request: value %q, sequence %d", r.Value, r.Sequence)
	}
}

func TestCampaignCancelledWithdraws(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	done := campaignAsync(ctx, c, "c", 2*time.Second)
	recv(t, s.reqs, "the first request")
	cancel()
	res := recv(t, done, "Campaign's return")
	if res.l != nil || !errors.Is(res.err, context.Canceled) || status.Code(res.err) != codes.Canceled ||
		errors.Is(res.err, ErrNotAcquired) {
		t.Fatalf("got %v, %v; want context.Canceled", res.l, res.err)
	}
	if end := recv(t, s.recvEnd, "the withdrawal"); end != io.EOF {
		t.Fatalf("the candidacy ended by %v, want a half-close", end)
	}
}

func TestCampaignEndedBeforeLeadingIsAServiceError(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	done := campaignAsync(context.Background(), c, "", 2*time.Second)
	recv(t, s.reqs, "the first request")
	s.end <- status.Error(codes.InvalidArgument, "election must not be empty")
	res := recv(t, done, "Campaign's return")
	if res.l != nil || status.Code(res.err) != codes.InvalidArgument || errors.Is(res.err, ErrNotAcquired) {
		t.Fatalf("got %v, %v; want INVALID_ARGUMENT", res.l, res.err)
	}
	if s, ok := status.FromError(res.err); !ok || s.Message() != "election must not be empty" {
		t.Fatalf("the server's status is not reachable: %v", s)
	}
}

func TestLeaderRetriesUnavailableAndReportsNone(t *testing.T) {
	e := &fakeElections{}
	e.leader = func(_ context.Context, req *redlockv1.LeaderRequest, n int) (*redlockv1.LeaderResponse, error) {
		switch {
		case req.Election != "jobs":
			return nil, status.Error(codes.InvalidArgument, "wrong election")
		case n == 1:
			return nil, status.Error(codes.Unavailable, "1 of 5 nodes answered")
		case n == 2:
			return &redlockv1.LeaderResponse{Leader: &redlockv1.Leadership{Value: "a", Term: 1<<63 + 5}}, nil
		default:
			return &redlockv1.LeaderResponse{}, nil
		}
	}
	c := startElections(t, e, fastRetry)
	got, err := c.Leader(context.Background(), "jobs")
	if err != nil || got == nil || *got != (Leader{Value: "a", Term: 1<<63 + 5}) {
		t.Fatalf("leader: %v, %v", got, err)
	}
	if n := atomic.LoadInt32(&e.leaderN); n != 2 {
		t.Fatalf("%d calls, want 2 (one retry of UNAVAILABLE)", n)
	}
	if got, err := c.Leader(context.Background(), "jobs"); got != nil || err != nil {
		t.Fatalf("no leader: %v, %v; want nil, nil", got, err)
	}
	if _, err := c.Leader(context.Background(), "other"); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("got %v, want INVALID_ARGUMENT", err)
	}
	if n := atomic.LoadInt32(&e.leaderN); n != 4 {
		t.Fatalf("%d calls, want 4 (INVALID_ARGUMENT not retried)", n)
	}
}

func observeState(l *Leader) *redlockv1.ObserveResponse {
	if l == nil {
		return &redlockv1.ObserveResponse{}
	}
	return &redlockv1.ObserveResponse{Leader: &redlockv1.Leadership{Value: l.Value, Term: l.Term}}
}

// observeScript is an Observe handler the test drives: each state put on states is sent on the
// open stream; an error put on end ends it. Each call is counted in opened.
type observeScript struct {
	states chan *Leader
	end    chan error
	opened chan int
}

func newObserveScript(e *fakeElections) *observeScript {
	s := &observeScript{states: make(chan *Leader), end: make(chan error), opened: make(chan int, 16)}
	e.observe = func(req *redlockv1.ObserveRequest, stream redlockv1.ElectionService_ObserveServer, n int) error {
		if req.Election != "jobs" {
			return status.Error(codes.InvalidArgument, "wrong election")
		}
		s.opened <- n
		for {
			select {
			case l := <-s.states:
				if err := stream.Send(observeState(l)); err != nil {
					return err
				}
			case err := <-s.end:
				return err
			case <-stream.Context().Done():
				return nil
			}
		}
	}
	return s
}

// observeClient is a client on e whose answered hook reports each Observe state taken in.
func observeClient(t *testing.T, e *fakeElections) (*Client, chan struct{}) {
	c := startElections(t, e, fastRetry)
	answered := make(chan struct{}, 64)
	c.testAnswered = func() { answered <- struct{}{} }
	return c, answered
}

func sameLeaders(got, want []*Leader) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if (got[i] == nil) != (want[i] == nil) || (got[i] != nil && *got[i] != *want[i]) {
			return false
		}
	}
	return true
}

func TestObserveFuncReopensAndDeliversOnlyNewStatesNotBackInTime(t *testing.T) {
	a5, old3, b7, c9 := &Leader{"a", 5}, &Leader{"old", 3}, &Leader{"b", 7}, &Leader{"c", 9}
	e := &fakeElections{}
	s := newObserveScript(e)
	c, answered := observeClient(t, e)

	var mu sync.Mutex
	var got []*Leader
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	o := c.ObserveFunc(context.Background(), "jobs", func(l *Leader) {
		mu.Lock()
		got = append(got, l)
		n := len(got)
		mu.Unlock()
		arrived <- struct{}{}
		if n == 4 {
			<-release
		}
	})
	delivered := func(l *Leader) {
		s.states <- l
		recv(t, answered, "the state taken in")
		recv(t, arrived, "its callback")
	}
	dropped := func(l *Leader) {
		s.states <- l
		recv(t, answered, "the state taken in")
	}
	recv(t, s.opened, "the first stream")
	delivered(nil)
	delivered(a5)
	s.end <- status.Error(codes.Unavailable, "the server is shutting down")
	recv(t, s.opened, "the reopened stream")
	dropped(a5)   // the reopened stream starts with the state already delivered
	dropped(old3) // an older term
	delivered(nil)
	delivered(b7) // its callback now waits for release
	dropped(c9)   // waits for the consumer: Close comes first, so it is never delivered
	o.Close()     // returns while the callback runs: it may be called from the callback itself
	select {
	case <-o.Done():
		t.Fatal("Done closed while a callback was running")
	default:
	}
	close(release)
	recv(t, o.Done(), "the observation's end")

	mu.Lock()
	defer mu.Unlock()
	if want := []*Leader{nil, a5, nil, b7}; !sameLeaders(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if n := atomic.LoadInt32(&e.observeN); n != 2 {
		t.Fatalf("%d Observe streams, want 2", n)
	}
	o.Close() // again: a no-op
}

func TestObserveGivesASlowReaderTheLatestStateAndClosesWhenCtxEnds(t *testing.T) {
	a5, b7, c9 := &Leader{"a", 5}, &Leader{"b", 7}, &Leader{"c", 9}
	e := &fakeElections{}
	e.leader = func(context.Context, *redlockv1.LeaderRequest, int) (*redlockv1.LeaderResponse, error) {
		return &redlockv1.LeaderResponse{Leader: &redlockv1.Leadership{Value: "c", Term: 9}}, nil
	}
	s := newObserveScript(e)
	c, answered := observeClient(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	states := c.Observe(ctx, "jobs")
	recv(t, s.opened, "the stream")
	for _, l := range []*Leader{nil, a5, b7, c9} { // nobody reads meanwhile
		s.states <- l
		recv(t, answered, "a state taken in")
	}
	if l := recv(t, states, "the latest state"); l == nil || *l != *c9 {
		t.Fatalf("read %v, want the latest, %v", l, c9)
	}
	// The consumer may call the client between two reads: nothing waits for it.
	if l, err := c.Leader(ctx, "jobs"); err != nil || *l != *c9 {
		t.Fatalf("Leader from the consumer: %v, %v", l, err)
	}
	s.states <- c9 // the same again: not sent
	recv(t, answered, "the repeat taken in")
	s.states <- nil
	recv(t, answered, "the vacancy taken in")
	if l := recv(t, states, "the vacancy"); l != nil {
		t.Fatalf("read %v, want none", l)
	}
	cancel()
	if l, open := <-states; open {
		t.Fatalf("read %v after ctx ended, want the channel closed", l)
	}
}

func TestObserveFuncCallbackMayCloseItsObservation(t *testing.T) {
	e := &fakeElections{}
	s := newObserveScript(e)
	c, answered := observeClient(t, e)
	var calls int32
	var o *Observation
	ready := make(chan struct{})
	o = c.ObserveFunc(context.Background(), "jobs", func(*Leader) {
		atomic.AddInt32(&calls, 1)
		<-ready
		o.Close() // deadlocked before: Close waited for this very call
	})
	close(ready)
	recv(t, s.opened, "the stream")
	s.states <- nil
	recv(t, answered, "the state taken in")
	recv(t, o.Done(), "the end of the observation closed from its callback")
	if n := atomic.LoadInt32(&calls); n != 1 {
		t.Fatalf("callback ran %d times", n)
	}
}

func TestObserveFuncStopsWhenItsContextEnds(t *testing.T) {
	e := &fakeElections{}
	s := newObserveScript(e)
	c, _ := observeClient(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan *Leader, 4)
	o := c.ObserveFunc(ctx, "jobs", func(l *Leader) { calls <- l })
	recv(t, s.opened, "the stream")
	s.states <- nil
	if l := recv(t, calls, "the first state"); l != nil {
		t.Fatalf("first state %v, want none", l)
	}
	cancel()
	recv(t, o.Done(), "the observation's end")
	// Done: the channel is closed, so no stream is opened and no callback made after this.
	if n := atomic.LoadInt32(&e.observeN); n != 1 || len(calls) != 0 {
		t.Fatalf("after ctx ended: %d streams, %d more callbacks", n, len(calls))
	}
	o.Close() // returns at once
}

func TestObservedStatesDifferAndNeverGoBackInTerm(t *testing.T) {
	var st observed
	for i, step := range []struct {
		state *Leader
		want  bool
	}{
		{nil, true},
		{nil, false}, // the same none again
		{&Leader{"a", 5}, true},
		{&Leader{"a", 5}, false}, // the same leader again
		{&Leader{"x", 3}, false}, // an older term
		{nil, true},
		{&Leader{"a", 5}, true},  // differs from the last (none), term not below
		{&Leader{"a2", 5}, true}, // a proclaimed value
		{&Leader{"b", 7}, true},
		{nil, true},
		{&Leader{"a2", 5}, false}, // below the last leader's term seen
	} {
		if got := st.accept(step.state); got != step.want {
			t.Fatalf("step %d (%v): accepted %v, want %v", i, step.state, got, step.want)
		}
	}
}

func TestLeadershipStringNamesNoSecretAndShowsItsState(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	l := lead(t, startElections(t, e), s, 10*time.Second, 10*time.Second)
	if got, want := l.String(), `Leadership{election="jobs", term=5, value="a", isLeader=true}`; got != want {
		t.Fatalf("String() = %s, want %s", got, want)
	}
	if _, err := l.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(l.String(), "isLeader=false}") {
		t.Fatalf("String() after resign = %s", l.String())
	}
	if got := (&Leader{"a", 1<<64 - 1}).String(); got != `Leader{value="a", term=18446744073709551615}` {
		t.Fatalf("Leader.String() = %s", got)
	}
}
