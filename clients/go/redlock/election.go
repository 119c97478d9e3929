package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// campaignStream is a leadership's kept stream.
type campaignStream = keptStream[*redlockv1.CampaignRequest, *redlockv1.CampaignResponse]

// Leadership is this client's leadership of an election, from the Campaign that won it until
// it is resigned or lost. It is kept alive by a Campaign stream with the same machinery as a
// kept lease (a request every ttl/4, each answer moving the deadline; a stream ended by a
// replica shutting down or a broken connection is reopened with the candidate's token and
// resume, keeping the term). The stream lives on its own, not on the context Campaign was
// called with. Its term is the lease's fencing token. Safe for concurrent use.
type Leadership struct {
	c        *Client
	election string
	token    string    // the candidate's own token: a reopened stream comes back with it
	life     *lifetime // deadline, guard, loss (started by the first answer)
	ks       *campaignStream

	sendValue string // the value requests carry: the campaign's, then the last proclaimed (under ks.mu)

	mu        sync.Mutex
	led       chan struct{} // closed by the first answer: the candidate leads
	leading   bool
	withdrawn bool // the campaign gave up before leading: a later answer makes no leader
	resigned  bool
	term      uint64
	value     string
	proclaims []*proclaimWait
}

// proclaimWait is a Proclaim waiting for an answer that carries its value.
type proclaimWait struct {
	value string
	done  chan struct{}
}

// Campaign makes this client a candidate in election, with the value WithValue gives (what Leader
// and Observe report while it leads; empty without it), and returns once it leads. Leadership is
// kept by a lease of ttl on the Campaign stream, renewed by a request every ttl/4 (sent while
// waiting too, so that the first answer is dated by a recent request). Every request carries a
// token made by the client, so that a candidate whose stream ended (its replica shut down, the
// connection broke) campaigns again as the same candidate, and a leader resumes its leadership
// with the same term.
//
// ctx bounds the wait only. When its deadline passes before this client leads, the candidacy
// is withdrawn (a leadership granted in that instant is resigned by the same half-close) and
// the error wraps ErrNotAcquired (code ABORTED). When ctx is cancelled, the candidacy is
// withdrawn too and the error satisfies errors.Is(err, context.Canceled). The leadership
// returned outlives ctx. A stream that ends NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED,
// INVALID_ARGUMENT or OK before leading fails the campaign with an *Error with the stream's
// status; any other end is retried with the same token (the retry policy's attempts and
// backoff, with jitter; a stream that stayed up a while starts the count over).
func (c *Client) Campaign(ctx context.Context, election string, ttl time.Duration,
	opts ...CampaignOption) (*Leadership, error) {
	value := campaignOptions(opts).value
	if err := ctx.Err(); err != nil {
		return nil, waitEnded(election, err)
	}
	token, err := newToken()
	if err != nil {
		return nil, &Error{Op: "campaign", Resource: election,
			st: status.New(codes.Internal, "no random token: "+err.Error()), cause: err}
	}
	l := &Leadership{c: c, election: election, token: token, sendValue: value, value: value,
		life: newLifetime(c.clock, "leadership", election, true, ttl), led: make(chan struct{})}
	ks, err := startKept(c, l.life, l.campaignSpec())
	if err != nil {
		return nil, callError("campaign", election, err)
	}
	l.ks = ks

	select {
	case <-l.led:
		return l, nil
	case <-ks.final:
		select {
		case <-l.led: // led, then ended at once: the loss is reported on the leadership
			return l, nil
		default:
		}
		err := ks.finalErr
		if err == nil || err == errNoStream {
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
		// Withdraws; resigns a grant already on its way.
		go ks.halfClose(context.Background(), c.callTimeout, false)
		return nil, waitEnded(election, ctx.Err())
	}
}

// campaignSpec makes the leadership's stream: every request carries the election, the value,
// the ttl and the candidate's token; the first request of a reopened stream asks to resume
// when the candidate was leading.
func (l *Leadership) campaignSpec() streamSpec[*redlockv1.CampaignRequest, *redlockv1.CampaignResponse] {
	return streamSpec[*redlockv1.CampaignRequest, *redlockv1.CampaignResponse]{
		op:   "leadership",
		what: "Campaign",
		open: func(ctx context.Context, reopen bool) (bidi[*redlockv1.CampaignRequest, *redlockv1.CampaignResponse], error) {
			s, err := l.c.elections.Campaign(ctx, grpc.WaitForReady(reopen))
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		request: func(seq uint64, first bool) *redlockv1.CampaignRequest {
			l.mu.Lock()
			resume := first && l.leading
			l.mu.Unlock()
			return &redlockv1.CampaignRequest{Election: l.election, Value: l.sendValue,
				Ttl: durationpb.New(l.life.currentTTL()), Sequence: seq, Token: l.token, Resume: resume}
		},
		echo: func(r *redlockv1.CampaignResponse) (uint64, time.Duration) {
			return r.GetSequence(), r.GetValidity().AsDuration()
		},
		answered: l.answered,
		awaitsAnswers: func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.leading
		},
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
func (l *Leadership) IsLeader() bool { return l.life.valid() }

// Remaining is the time this client may still act as the leader (until the guarded deadline);
// 0 when it may not.
func (l *Leadership) Remaining() time.Duration { return l.life.remaining() }

// Deadline is the send time of the request whose answer last renewed the leadership plus the
// validity it carried: the deadline itself, without the guard, with the monotonic reading.
func (l *Leadership) Deadline() time.Time { return l.life.deadlineAt() }

// Done is closed when the leadership is lost or resigned, like a context's Done.
func (l *Leadership) Done() <-chan struct{} { return l.life.done }

// Err says why Done is closed, like a context's Err: the error the leadership was lost with
// (it wraps ErrLeaseLost), ErrResigned once it was resigned (or closed) first, nil while it
// lasts.
func (l *Leadership) Err() error {
	if err := l.life.err(); err != nil {
		return err
	}
	if l.life.isEnded() {
		return ErrResigned
	}
	return nil
}

// String describes the leadership: election, term, value and whether it still leads.
func (l *Leadership) String() string {
	leader := l.IsLeader()
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("Leadership{election=%q, term=%d, value=%q, isLeader=%t}",
		l.election, l.term, l.value, leader)
}

// OnLost registers fn to be called once, on a goroutine of its own, with the loss error (it
// wraps ErrLeaseLost) when the leadership is lost: its stream ended with NOT_FOUND (or
// PERMISSION_DENIED, UNAUTHENTICATED, INVALID_ARGUMENT, or OK without a resign), or the guarded
// deadline passed without a renewal (a stream that could not be reopened in time). If it
// already is lost, fn runs at once. It is never called for a leadership resigned before it was
// lost.
func (l *Leadership) OnLost(fn func(error)) { l.life.onLost(fn) }

// Proclaim changes the value the leader is reported with, keeping its term. It returns once an
// answer of the server carries the new value; the loss error if the leadership is lost first;
// an error with code DEADLINE_EXCEEDED if no such answer came within the call timeout.
func (l *Leadership) Proclaim(ctx context.Context, value string) error {
	if err := l.unusable("proclaim"); err != nil {
		return err
	}
	w := &proclaimWait{value: value, done: make(chan struct{})}
	l.mu.Lock()
	l.proclaims = append(l.proclaims, w)
	l.mu.Unlock()

	l.ks.sendNow(func() { l.sendValue = value })
	t := time.NewTimer(l.c.callTimeout)
	defer t.Stop()
	var failed error
	select {
	case <-w.done:
		return nil
	case <-l.life.done:
		failed = l.unusable("proclaim")
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
// IsLeader is false and no loss is reported. When the stream is down (being reopened), it is
// reopened to carry the half-close. An error says the stream did not end cleanly: the
// leadership then runs out at its validity.
func (l *Leadership) Resign(ctx context.Context) (bool, error) {
	l.mu.Lock()
	if l.resigned {
		l.mu.Unlock()
		return false, nil
	}
	l.resigned = true
	l.mu.Unlock()
	if _, wasLost := l.life.end(); wasLost {
		return false, nil
	}

	ended, ok := l.ks.halfClose(ctx, l.c.callTimeout, true)
	var failed *Error
	switch {
	case ok && status.Code(ended) == codes.OK:
		return true, nil
	case ok && status.Code(ended) == codes.NotFound:
		return false, nil
	case ok:
		failed = callError("resign", l.election, ended)
	case ctx.Err() != nil:
		failed = abandonedError("resign", l.election, ctx.Err(), nil)
	default:
		failed = &Error{Op: "resign", Resource: l.election,
			st: status.New(codes.DeadlineExceeded, "the Campaign stream did not end within the call timeout")}
	}
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

// unusable is the error for an operation on a resigned or lost leadership, else nil.
func (l *Leadership) unusable(op string) error {
	if lost := l.life.lossErr(); lost != nil {
		return lost
	}
	if l.life.isEnded() {
		e := lostError(op, l.election, status.New(codes.FailedPrecondition, "the leadership was resigned"), nil)
		e.election = true
		return e
	}
	return nil
}

// answered applies one dated answer: the first makes the candidate the leader; each later one
// updates the value and the term and moves the deadline, only forward.
func (l *Leadership) answered(resp *redlockv1.CampaignResponse, deadline time.Time) {
	l.mu.Lock()
	if !l.leading {
		if l.withdrawn {
			l.mu.Unlock()
			return
		}
		l.leading = true
		l.term = resp.GetTerm()
		l.value = resp.GetValue()
		l.mu.Unlock()
		l.life.start(deadline)
		close(l.led)
		return
	}
	l.value = resp.GetValue()
	// A renewal after a node fault may report a higher fencing token: the term follows.
	if resp.GetTerm() > l.term {
		l.term = resp.GetTerm()
	}
	var shown []*proclaimWait
	kept := l.proclaims[:0]
	for _, w := range l.proclaims {
		if w.value == l.value {
			shown = append(shown, w)
		} else {
			kept = append(kept, w)
		}
	}
	l.proclaims = kept
	l.mu.Unlock()
	l.life.renewed(deadline)
	for _, w := range shown {
		close(w.done)
	}
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

// Observe watches election: the channel it returns gets the current leader (nil: none), then
// every change, and is closed once ctx ends (cancel ctx to stop; nothing else needs closing).
// The consumer may call anything, Observe and Campaign included, between two reads: nothing
// waits for it but the next value. A consumer that reads slower than the changes come gets the
// latest state when it reads next, not a backlog. When the server's stream ends, it is reopened
// (with the retry policy's backoff, without a limit), and only a state that differs from the
// last one sent and whose term is not below the last leader's term seen is sent: no repeat,
// never back in time. A value being handed over as ctx ends may still arrive; none follows it.
func (c *Client) Observe(ctx context.Context, election string) <-chan *Leader {
	out := make(chan *Leader)
	go observeInto(ctx, c, election, out)
	return out
}

// Observation is a callback on an election's leader; see Client.ObserveFunc.
type Observation struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	closed bool
}

// ObserveFunc calls fn with what Observe sends (the current leader, nil for none, then every
// change), one call at a time on a goroutine of its own, until Close or until ctx ends. It reads
// Observe's channel: the same states, reopening and order.
func (c *Client) ObserveFunc(ctx context.Context, election string, fn func(*Leader)) *Observation {
	octx, cancel := context.WithCancel(ctx)
	o := &Observation{cancel: cancel, done: make(chan struct{})}
	states := c.Observe(octx, election)
	go func() {
		defer close(o.done)
		for s := range states {
			o.mu.Lock()
			stop := o.closed
			o.mu.Unlock()
			if !stop {
				fn(s)
			}
		}
	}()
	return o
}

// Close stops the observation: no call of fn starts after Close returns. It does not wait for
// a call that is running, so fn itself may call it; Done is closed once that call returned.
func (o *Observation) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cancel()
}

// Done is closed when the observation has ended (Close, or ctx ended) and no call of fn is
// running.
func (o *Observation) Done() <-chan struct{} { return o.done }

// observed is what an observation has delivered, for the rules on what it delivers next.
type observed struct {
	delivered bool    // anything yet
	last      *Leader // the last state delivered (nil: none)
	seenTerm  bool
	maxTerm   uint64 // the highest leader term seen
}

// fresh tells whether s is not back in time (a leader's term not below the highest seen), and
// records its term if so.
func (st *observed) fresh(s *Leader) bool {
	if s != nil {
		if st.seenTerm && s.Term < st.maxTerm {
			return false
		}
		st.seenTerm, st.maxTerm = true, s.Term
	}
	return true
}

// differs tells whether s differs from the last state delivered (or is the first).
func (st *observed) differs(s *Leader) bool {
	switch {
	case !st.delivered:
		return true
	case s == nil || st.last == nil:
		return (s == nil) != (st.last == nil)
	default:
		return *s != *st.last
	}
}

// record notes s as delivered.
func (st *observed) record(s *Leader) {
	st.delivered, st.last = true, nil
	if s != nil {
		kept := *s // the consumer gets s itself and may change it
		st.last = &kept
	}
}

// accept tells whether s is to be delivered (fresh and different), and records it if so.
func (st *observed) accept(s *Leader) bool {
	if !st.fresh(s) || !st.differs(s) {
		return false
	}
	st.record(s)
	return true
}

// observeInto runs Observe streams, sending their states to out, until ctx ends; then closes out.
func observeInto(ctx context.Context, c *Client, election string, out chan<- *Leader) {
	defer close(out)
	var st observed
	for attempt := 1; ctx.Err() == nil; attempt++ {
		worked, ended := watch(ctx, c, election, out, &st)
		if worked {
			attempt = 1 // the stream worked: the backoff starts over
		}
		// The server's pushback (rule 17) replaces the backoff; with no limit and nobody to
		// fail, "do not retry" is the longest backoff.
		pause, retry := retryWait(ended, c.retry.backoff(attempt))
		if !retry {
			pause = c.retry.maxBackoff
		}
		if sleep(ctx, pause) != nil {
			return
		}
	}
}

// watch runs one Observe stream until it ends (or ctx does); true if it brought any state, and
// how the stream ended. The states it receives while the consumer has not taken the last one
// replace it: the consumer gets the latest.
func watch(ctx context.Context, c *Client, election string, out chan<- *Leader, st *observed) (bool, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.elections.Observe(sctx, &redlockv1.ObserveRequest{Election: election})
	if err != nil {
		return false, err
	}
	type received struct {
		s   *Leader
		err error
	}
	in := make(chan received)
	go func() {
		for {
			resp, err := stream.Recv()
			select {
			case in <- received{leaderOf(resp.GetLeader()), err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	got := false
	var pending *Leader
	havePending := false
	for {
		var send chan<- *Leader
		if havePending {
			send = out
		}
		select {
		case r := <-in:
			if r.err != nil {
				if havePending && ctx.Err() == nil {
					select { // hand over what came before the end
					case out <- pending:
						st.record(pending)
					case <-ctx.Done():
					}
				}
				return got, r.err
			}
			got = true
			if st.fresh(r.s) { // replaces what the consumer has not taken yet
				pending, havePending = r.s, st.differs(r.s)
			}
			if h := c.testAnswered; h != nil {
				h()
			}
		case send <- pending:
			st.record(pending)
			pending, havePending = nil, false
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}
