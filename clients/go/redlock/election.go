package redlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// Leadership is this client's leadership of an election, from the Campaign that won it until
// it is resigned or lost. It is kept alive by the Campaign stream it was won on, which lives
// on its own (not on the context Campaign was called with): a request every ttl/4, each answer
// moving the deadline. Its term is the lease's fencing token. Safe for concurrent use.
type Leadership struct {
	c        *Client
	election string
	ttl      time.Duration

	stream       redlockv1.ElectionService_CampaignClient
	cancelStream context.CancelFunc // ends the stream without resigning (it then runs out)

	sendMu    sync.Mutex // one Send/CloseSend at a time, as grpc-go requires
	closing   bool       // half-closed or cancelled by this side: the stream's end is no loss
	sent      sendLog
	sendValue string // the value requests carry: the campaign's, then the last proclaimed

	stopOnce sync.Once
	stop     chan struct{} // ends the sender
	ended    chan struct{} // closed when the stream has ended; endErr is then set
	endErr   error         // nil: ended OK

	mu        sync.Mutex
	led       chan struct{} // closed by the first answer: the candidate leads
	leading   bool
	withdrawn bool // the campaign gave up before leading: a later answer makes no leader
	term      uint64
	value     string
	deadline  time.Time   // send time of the echoed request + validity, monotonic
	expiry    *time.Timer // fires the loss at deadline - guard
	lost      *Error
	resigned  bool
	callbacks []func(error)
	proclaims []*proclaimWait
}

// proclaimWait is a Proclaim waiting for an answer that carries its value.
type proclaimWait struct {
	value string
	shown bool // an answer carried the value (set under the leadership's mu before done closes)
	done  chan struct{}
}

// Campaign makes this client a candidate in election with value (what Leader and Observe
// report while it leads) and returns once it leads. Leadership is kept by a lease of ttl on the
// Campaign stream, renewed by a request every ttl/4 (sent while waiting too, so that the first
// answer is dated by a recent request).
//
// ctx bounds the wait only. When its deadline passes before this client leads, the candidacy
// is withdrawn (a leadership granted in that instant is resigned by the same half-close) and
// the error wraps ErrNotAcquired (code ABORTED). When ctx is cancelled, the candidacy is
// withdrawn too and the error satisfies errors.Is(err, context.Canceled). The leadership
// returned outlives ctx. Any other end of the stream before leading is an *Error with the
// stream's status. Nothing is retried.
func (c *Client) Campaign(ctx context.Context, election, value string, ttl time.Duration) (*Leadership, error) {
	if err := ctx.Err(); err != nil {
		return nil, waitEnded(election, err)
	}
	// Opening is bounded by the call timeout; the stream itself lives on its own context.
	streamCtx, cancel := context.WithCancel(context.Background())
	timeout := time.AfterFunc(c.callTimeout, cancel)
	stream, err := c.elections.Campaign(streamCtx)
	if !timeout.Stop() && err == nil {
		err = status.Error(codes.DeadlineExceeded, "the Campaign stream did not open within the call timeout")
	}
	if err != nil {
		cancel()
		return nil, callError("campaign", election, err)
	}
	l := &Leadership{c: c, election: election, ttl: ttl, stream: stream, cancelStream: cancel,
		sendValue: value, value: value, stop: make(chan struct{}), ended: make(chan struct{}),
		led: make(chan struct{})}
	l.send(nil) // at once: the server waits for the first request
	go l.receive()
	go l.run()

	select {
	case <-l.led:
		return l, nil
	case <-l.ended:
		select {
		case <-l.led: // led, then ended at once: the loss is reported on the leadership
			return l, nil
		default:
		}
		err := l.endErr
		if err == nil {
			err = status.Error(codes.Unavailable, "the Campaign stream ended before this candidate led")
		}
		return nil, callError("campaign", election, err)
	case <-ctx.Done():
		l.mu.Lock()
		if l.leading { // the answer came first
			l.mu.Unlock()
			return l, nil
		}
		l.withdrawn = true
		l.mu.Unlock()
		l.halfCloseInBackground() // withdraws; resigns a grant already on its way
		return nil, waitEnded(election, ctx.Err())
	}
}

// waitEnded is Campaign's error when ctx ended before leading: "not acquired" (ABORTED) for a
// deadline, the context's own error otherwise.
func waitEnded(election string, ctxErr error) error {
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return &Error{Op: "campaign", Resource: election, kind: ErrNotAcquired, cause: ctxErr,
			st: status.New(codes.Aborted, "not leading when the wait ran out")}
	}
	return abandonedError("campaign", election, ctxErr, nil)
}

// Election is the name of the election.
func (l *Leadership) Election() string { return l.election }

// Term is the leadership's fencing token: it strictly increases per election across leaders,
// and may rise (never fall) while leading, after a node fault. Read it for every write the
// leader makes, so that the target can refuse an older leader.
func (l *Leadership) Term() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.term
}

// Value is the value the server last reported for this leadership (the campaign's, or the
// last one proclaimed).
func (l *Leadership) Value() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.value
}

// IsLeader reports whether this client may still act as the leader: not resigned, not lost,
// and the guarded deadline (deadline - min(ttl/20, 100ms)) not passed.
func (l *Leadership) IsLeader() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leaderLocked(time.Now())
}

func (l *Leadership) leaderLocked(now time.Time) bool {
	return l.leading && !l.resigned && l.lost == nil && now.Before(l.deadline.Add(-guardFor(l.ttl)))
}

// String describes the leadership: election, term, value and whether it still leads.
func (l *Leadership) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("Leadership{election=%q, term=%d, value=%q, isLeader=%t}",
		l.election, l.term, l.value, l.leaderLocked(time.Now()))
}

// OnLost registers fn to be called once, on a goroutine of its own, with the loss error (it
// wraps ErrLeaseLost) when the leadership is lost: the stream ended without a resign, or the
// guarded deadline passed without a renewal. If it already is lost, fn runs at once. It is
// never called for a leadership resigned before it was lost.
func (l *Leadership) OnLost(fn func(error)) {
	l.mu.Lock()
	lost := l.lost
	if lost == nil {
		l.callbacks = append(l.callbacks, fn)
	}
	l.mu.Unlock()
	if lost != nil {
		go fn(lost)
	}
}

// Proclaim changes the value the leader is reported with, keeping its term. It returns once an
// answer of the server carries the new value; the loss error if the leadership is lost first;
// an error with code DEADLINE_EXCEEDED if no such answer came within the call timeout.
func (l *Leadership) Proclaim(ctx context.Context, value string) error {
	l.mu.Lock()
	if err := l.unusableLocked("proclaim"); err != nil {
		l.mu.Unlock()
		return err
	}
	w := &proclaimWait{value: value, done: make(chan struct{})}
	l.proclaims = append(l.proclaims, w)
	l.mu.Unlock()

	l.send(&value)
	t := time.NewTimer(l.c.callTimeout)
	defer t.Stop()
	var failed error
	select {
	case <-w.done:
		l.mu.Lock()
		defer l.mu.Unlock()
		if w.shown {
			return nil
		}
		return l.unusableLocked("proclaim")
	case <-t.C:
		failed = &Error{Op: "proclaim", Resource: l.election, election: true,
			st: status.New(codes.DeadlineExceeded, "no answer showed the new value within the call timeout")}
	case <-ctx.Done():
		failed = abandonedError("proclaim", l.election, ctx.Err(), nil)
	}
	l.mu.Lock()
	for i, p := range l.proclaims {
		if p == w {
			l.proclaims = append(l.proclaims[:i], l.proclaims[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	return failed
}

// Resign gives the leadership up by half-closing its stream and waits (up to the call timeout,
// or ctx) for the stream's end. True only on the first call, and only when the stream ended OK
// (the server resigned it); false for one already lost or not held any more. Afterwards
// IsLeader is false and no loss is reported. An error says the stream did not end cleanly:
// the leadership then runs out at its validity.
func (l *Leadership) Resign(ctx context.Context) (bool, error) {
	l.mu.Lock()
	if l.resigned {
		l.mu.Unlock()
		return false, nil
	}
	l.resigned = true
	wasLost := l.lost != nil
	waiting := l.proclaims
	l.proclaims = nil
	if l.expiry != nil {
		l.expiry.Stop()
	}
	l.mu.Unlock()
	for _, w := range waiting {
		close(w.done)
	}
	if wasLost {
		return false, nil
	}

	l.sendMu.Lock()
	if !l.closing {
		l.closing = true
		_ = l.stream.CloseSend()
	}
	l.sendMu.Unlock()
	l.stopSending()
	t := time.NewTimer(l.c.callTimeout)
	defer t.Stop()
	var failed *Error
	select {
	case <-l.ended:
		switch status.Code(l.endErr) {
		case codes.OK:
			return true, nil
		case codes.NotFound:
			return false, nil
		}
		failed = callError("resign", l.election, l.endErr)
	case <-t.C:
		failed = &Error{Op: "resign", Resource: l.election,
			st: status.New(codes.DeadlineExceeded, "the Campaign stream did not end within the call timeout")}
	case <-ctx.Done():
		failed = abandonedError("resign", l.election, ctx.Err(), nil)
	}
	l.cancelStream()
	failed.election = true
	return false, failed
}

// Close resigns (see Resign, bounded by the call timeout). A leadership already lost or
// resigned closes without an error.
func (l *Leadership) Close() error {
	if _, err := l.Resign(context.Background()); err != nil {
		return err
	}
	return nil
}

// unusableLocked is the error for an operation on a resigned or lost leadership, else nil.
func (l *Leadership) unusableLocked(op string) error {
	if l.lost != nil {
		return l.lost
	}
	if l.resigned {
		e := lostError(op, l.election, status.New(codes.FailedPrecondition, "the leadership was resigned"), nil)
		e.election = true
		return e
	}
	return nil
}

// send sends the next request (with value, when given, as the value from now on), recording
// its send time under its sequence.
func (l *Leadership) send(value *string) {
	l.sendMu.Lock()
	defer l.sendMu.Unlock()
	if l.closing {
		return
	}
	if value != nil {
		l.sendValue = *value
	}
	seq := l.sent.next()
	// An error means the stream has ended; receive reports how.
	_ = l.stream.Send(&redlockv1.CampaignRequest{
		Election: l.election, Value: l.sendValue, Ttl: durationpb.New(l.ttl), Sequence: seq})
}

// run sends a request every ttl/4 until stopped, while waiting and while leading.
func (l *Leadership) run() {
	period := l.ttl / 4
	if period < time.Millisecond {
		period = time.Millisecond
	}
	for {
		t := time.NewTimer(period)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-t.C:
		}
		l.send(nil)
	}
}

func (l *Leadership) stopSending() {
	l.stopOnce.Do(func() { close(l.stop) })
}

// receive takes in each answer and reports the stream's end.
func (l *Leadership) receive() {
	for {
		resp, err := l.stream.Recv()
		if err != nil {
			l.finish(err)
			return
		}
		l.answered(resp)
		if h := l.c.testAnswered; h != nil {
			h()
		}
	}
}

// answered applies one answer: the first makes the candidate the leader; each later one
// updates the value and moves the deadline, only forward. An answer this client cannot date
// (unknown sequence) is ignored.
func (l *Leadership) answered(resp *redlockv1.CampaignResponse) {
	l.sendMu.Lock()
	sent, known := l.sent.at(resp.GetSequence())
	l.sendMu.Unlock()
	if !known {
		return
	}
	deadline := sent.Add(resp.GetValidity().AsDuration())

	l.mu.Lock()
	if !l.leading {
		if !l.withdrawn {
			l.leading = true
			l.term = resp.GetTerm()
			l.value = resp.GetValue()
			l.deadline = deadline
			l.scheduleExpiryLocked()
			close(l.led)
		}
		l.mu.Unlock()
		return
	}
	if l.resigned || l.lost != nil {
		l.mu.Unlock()
		return
	}
	l.value = resp.GetValue()
	// A renewal after a node fault may report a higher fencing token: the term follows.
	if resp.GetTerm() > l.term {
		l.term = resp.GetTerm()
	}
	if deadline.After(l.deadline) {
		l.deadline = deadline
		l.scheduleExpiryLocked()
	}
	var shown []*proclaimWait
	kept := l.proclaims[:0]
	for _, w := range l.proclaims {
		if w.value == l.value {
			w.shown = true
			shown = append(shown, w)
		} else {
			kept = append(kept, w)
		}
	}
	l.proclaims = kept
	l.mu.Unlock()
	for _, w := range shown {
		close(w.done)
	}
}

// finish records the stream's end; unless this side half-closed or cancelled it, the end of a
// leading stream is a loss (before leading, Campaign reports it).
func (l *Leadership) finish(err error) {
	if errors.Is(err, io.EOF) {
		err = nil
	}
	l.stopSending()
	l.sendMu.Lock()
	closing := l.closing
	l.sendMu.Unlock()
	l.endErr = err
	close(l.ended)
	l.cancelStream()
	if closing {
		return
	}
	st := status.Convert(err)
	if err == nil {
		st = status.New(codes.Unavailable, "the Campaign stream ended without a resign")
	}
	l.lose(lostError("leadership", l.election, st, err), false)
}

// scheduleExpiryLocked (re)arms the timer that reports the loss at deadline - guard.
func (l *Leadership) scheduleExpiryLocked() {
	if l.expiry != nil {
		l.expiry.Stop()
	}
	l.expiry = time.AfterFunc(time.Until(l.deadline.Add(-guardFor(l.ttl))), func() {
		l.lose(lostError("leadership", l.election, status.New(codes.DeadlineExceeded,
			"the leadership ran out: its guarded deadline passed without a renewal"), nil), true)
	})
}

// lose marks a leading leadership lost with err (once; never after a resign), stops its
// renewals, fails the waiting proclaims and runs the loss callbacks, each on its own
// goroutine. onlyIfExpired: only when the guarded deadline has passed (a timer that fired
// while a renewal moved the deadline does nothing).
func (l *Leadership) lose(err *Error, onlyIfExpired bool) {
	err.election = true
	l.mu.Lock()
	if !l.leading || l.resigned || l.lost != nil ||
		(onlyIfExpired && time.Now().Before(l.deadline.Add(-guardFor(l.ttl)))) {
		l.mu.Unlock()
		return
	}
	l.lost = err
	callbacks, waiting := l.callbacks, l.proclaims
	l.callbacks, l.proclaims = nil, nil
	if l.expiry != nil {
		l.expiry.Stop()
	}
	l.mu.Unlock()
	// Whatever the server still holds is given up: the next candidate need not wait for it.
	l.halfCloseInBackground()
	for _, w := range waiting {
		close(w.done)
	}
	for _, fn := range callbacks {
		go fn(err)
	}
}

// halfCloseInBackground half-closes the stream (the server resigns or withdraws at once) and
// stops the renewals; the stream is cancelled when it has ended, or after the call timeout.
func (l *Leadership) halfCloseInBackground() {
	l.sendMu.Lock()
	if !l.closing {
		l.closing = true
		_ = l.stream.CloseSend()
	}
	l.sendMu.Unlock()
	l.stopSending()
	go func() {
		t := time.NewTimer(l.c.callTimeout)
		defer t.Stop()
		select {
		case <-l.ended:
		case <-t.C:
		}
		l.cancelStream()
	}()
}

// Leader is who leads an election, as everyone may see it.
type Leader struct {
	// Value is the leader's value (what it campaigned with or last proclaimed).
	Value string
	// Term is the leader's fencing token (a uint64: compare it as one).
	Term uint64
}

// String describes the leader.
func (ld *Leader) String() string {
	if ld == nil {
		return "Leader{none}"
	}
	return fmt.Sprintf("Leader{value=%q, term=%d}", ld.Value, ld.Term)
}

func leaderOf(p *redlockv1.Leadership) *Leader {
	if p == nil {
		return nil
	}
	return &Leader{Value: p.GetValue(), Term: p.GetTerm()}
}

// Leader reads the current leader of election: nil when it has none. UNAVAILABLE (too few
// nodes answered to tell) is retried as for the other calls.
func (c *Client) Leader(ctx context.Context, election string) (*Leader, error) {
	var resp *redlockv1.LeaderResponse
	err := c.unary(ctx, nil, func(ctx context.Context) error {
		var err error
		resp, err = c.elections.Leader(ctx, &redlockv1.LeaderRequest{Election: election})
		return err
	})
	if err != nil {
		e := callError("leader", election, err)
		e.election = true
		return nil, e
	}
	return leaderOf(resp.GetLeader()), nil
}

// Observation watches an election; see Client.Observe.
type Observation struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	closed bool
}

// Observe calls fn with the current leader of election (nil: none), then with every change,
// one call at a time on a goroutine of its own, until Close or until ctx ends. When the
// server's stream ends otherwise, it is reopened (with the retry policy's backoff, without a
// limit), and fn is then called only with a state that differs from the last one delivered
// and whose term is not below the last leader's term seen: no repeat, never back in time.
func (c *Client) Observe(ctx context.Context, election string, fn func(*Leader)) *Observation {
	octx, cancel := context.WithCancel(ctx)
	o := &Observation{cancel: cancel, done: make(chan struct{})}
	go o.run(octx, c, election, fn)
	return o
}

// Close stops the observation. When it returns, fn is not running and will not be called
// again. It waits for a call of fn that is running, so fn itself must not call Close
// (it may start `go o.Close()`).
func (o *Observation) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cancel()
	<-o.done
}

// observed is what an Observation has delivered, for the rules on what it delivers next.
type observed struct {
	delivered bool    // anything yet
	last      *Leader // the last state delivered (nil: none)
	seenTerm  bool
	maxTerm   uint64 // the highest leader term seen
}

// accept tells whether s is to be delivered, and records it if so.
func (st *observed) accept(s *Leader) bool {
	if st.delivered {
		switch {
		case s == nil && st.last == nil:
			return false
		case s != nil && st.last != nil && *s == *st.last:
			return false
		}
	}
	if s != nil {
		if st.seenTerm && s.Term < st.maxTerm {
			return false
		}
		st.seenTerm, st.maxTerm = true, s.Term
	}
	st.delivered, st.last = true, nil
	if s != nil {
		kept := *s // fn gets s itself and may change it
		st.last = &kept
	}
	return true
}

func (o *Observation) run(ctx context.Context, c *Client, election string, fn func(*Leader)) {
	defer close(o.done)
	defer o.cancel()
	var st observed
	for attempt := 1; ctx.Err() == nil; attempt++ {
		if o.watch(ctx, c, election, fn, &st) {
			attempt = 1 // the stream worked: the backoff starts over
		}
		if sleep(ctx, c.retry.backoff(attempt)) != nil {
			return
		}
	}
}

// watch runs one Observe stream until it ends; true if it brought any state.
func (o *Observation) watch(ctx context.Context, c *Client, election string, fn func(*Leader), st *observed) bool {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.elections.Observe(sctx, &redlockv1.ObserveRequest{Election: election})
	if err != nil {
		return false
	}
	got := false
	for {
		resp, err := stream.Recv()
		if err != nil {
			return got
		}
		got = true
		s := leaderOf(resp.GetLeader())
		if !st.accept(s) {
			continue
		}
		o.mu.Lock()
		stop := o.closed || ctx.Err() != nil
		o.mu.Unlock()
		if stop {
			return got
		}
		fn(s)
	}
}
