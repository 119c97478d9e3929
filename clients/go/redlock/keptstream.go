package redlock

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// replacementDivisor: a stream opened to replace a silent one is held to this part of the
// silence bound until its first answer (round_robin may have put it on the silent replica again).
const replacementDivisor = 3

// slowestAnswer is the slowest recent answer of one kept grant's streams (from the send of a
// request to the answer that echoes it), which the silence bound grows with: a replica that is
// slow, not silent, must not be taken for a silent one. Each stream opened is one more renewal
// on the replicas (the superseded ones are renewed until they end), so with hundreds of grants a
// burst of late answers (a replica just restarted, a loaded host) became thousands of new
// streams a second, which made every answer later still, until none came before its deadline
// (issue 40). It fades by half every ttl (four periods), so that a replica slow for a while and
// fast again is soon held to the usual bound. An answer later than the ttl is left out: its
// replica was stopped (a frozen host that woke up), not slow, and what it would teach is to wait
// for a silent replica. Not safe for concurrent use: its keptStream's lock guards it.
type slowestAnswer struct {
	slowest time.Duration
	at      time.Time
}

// answered: an answer came latency after its request was sent, at now.
func (a *slowestAnswer) answered(latency time.Duration, now time.Time, period time.Duration) {
	if latency > 4*period {
		return
	}
	if latency >= a.faded(now, period) {
		a.slowest, a.at = latency, now
	}
}

// faded is the slowest recent answer's time, faded by half for every ttl since it came.
func (a *slowestAnswer) faded(now time.Time, period time.Duration) time.Duration {
	if a.slowest == 0 {
		return 0
	}
	ttls := float64(now.Sub(a.at)) / float64(4*period)
	return time.Duration(float64(a.slowest) * math.Pow(0.5, ttls))
}

// sharedAnswers is the slowest recent answer of every kept grant of a Client, which each grant's
// silence bound follows as it follows its own. A stream that just moved (its replica shut down)
// has no answer of its own yet, and its first one is late when hundreds of streams moved with it
// to replicas busy starting: the other grants' answers say so. Only answers on a grant's open
// stream count there: a late answer on a stream left for its silence is a replica that stopped and
// woke (a frozen host), which says nothing of the others, and the other grants must still leave a
// silent replica within the bound. A silent replica leaves it as it was (it answers nothing), and
// the replicas still answering keep it short. Safe for concurrent use (taken under a keptStream's
// lock, never the other way round).
type sharedAnswers struct {
	mu sync.Mutex
	a  slowestAnswer
}

func (s *sharedAnswers) answered(latency time.Duration, now time.Time, period time.Duration) {
	s.mu.Lock()
	s.a.answered(latency, now, period)
	s.mu.Unlock()
}

func (s *sharedAnswers) faded(now time.Time, period time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.a.faded(now, period)
}

// silenceBound is the silence bound of a stream: period (ttl/4), a third of it for one replacing
// a silent one that has not answered yet, never less than twice the slowest recent answer, up to
// twice period.
func silenceBound(period time.Duration, replacing bool, slowest time.Duration) time.Duration {
	base := period
	if replacing {
		base = period / replacementDivisor
	}
	measured := 2 * slowest
	if measured > 2*period {
		measured = 2 * period
	}
	if measured > base {
		return measured
	}
	return base
}

// sentRing is how many recent request send times a kept stream remembers. An answer echoes the
// sequence the server had when its renewal began, normally one of the last two or three; one
// that has left the ring is too old to move the deadline anyway.
const sentRing = 16

// sendLog numbers a kept stream's requests with a rising sequence (across the streams it
// reopens) and remembers when the recent ones were sent, so that an answer can be dated by the
// sequence it echoes. Not safe for concurrent use: its keptStream's lock guards it.
type sendLog struct {
	seq     uint64
	sentSeq [sentRing]uint64
	sentAt  [sentRing]time.Time
}

// next numbers a request sent now.
func (s *sendLog) next(now time.Time) uint64 {
	s.seq++
	slot := s.seq % sentRing
	s.sentSeq[slot] = s.seq
	s.sentAt[slot] = now
	return s.seq
}

// at is when the request with sequence seq was sent, if it is still remembered.
func (s *sendLog) at(seq uint64) (time.Time, bool) {
	slot := seq % sentRing
	if seq == 0 || s.sentSeq[slot] != seq {
		return time.Time{}, false
	}
	return s.sentAt[slot], true
}

// bidi is a bidirectional stream as the generated clients have them (KeepAlive, Campaign).
type bidi[Req, Resp any] interface {
	Send(Req) error
	Recv() (Resp, error)
	CloseSend() error
}

// streamSpec is what one kind of kept stream brings to the shared machinery.
type streamSpec[Req, Resp any] struct {
	op   string // the Op of a loss error: "keep-alive", "leadership"
	what string // the stream's name in messages: "KeepAlive", "Campaign"
	// open opens a stream; reopen: not the first, so it waits for a ready connection (bounded
	// by the call timeout) rather than failing at once while every replica reconnects.
	open func(ctx context.Context, reopen bool) (bidi[Req, Resp], error)
	// request is the request with sequence seq; first: the first on its stream (a reopened
	// stream names the grant again). Called under the keptStream's lock, in sending order.
	request func(seq uint64, first bool) Req
	echo    func(Resp) (seq uint64, validity time.Duration)
	// answered takes in an answer with a known sequence; deadline is the send time of the
	// request it echoes + its validity. Called in arrival order, outside the lock.
	answered func(resp Resp, deadline time.Time)
	// giveBack gives the grant back when it is lost with no stream open (nil: nothing to do).
	giveBack func()
	// awaitsAnswers tells whether answers are due, so that a silent stream is reopened (nil:
	// always; a candidate still waiting hears nothing until it leads). Called under the lock.
	awaitsAnswers func() bool
}

// errNoStream: a half-close found no stream to close.
var errNoStream = errors.New("no stream open")

// keptStream is the client end of the stream that keeps a grant alive: KeepAlive for a lease,
// Campaign for a leadership. It sends a request at once and every ttl/4 with a rising
// sequence, dates each answer by the send time of the request it echoes, and reopens the
// stream when it ends with anything but a loss.
//
// The server counts a renewal's validity from when it finished, and its answer may then spend
// any time on the way. So the deadline is counted from the send time of the request whose
// sequence the answer echoes: that renewal began after the request arrived, so the local
// deadline is never later than the server's. Requests every ttl/4 keep that send time recent;
// each renews at once, and the server's own ttl/3 timer, restarted by each renewal, never fires
// first, so renewals are not doubled.
//
// A stream that ends NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED, INVALID_ARGUMENT or OK
// unasked is a loss. Any other end (a replica shutting down, a broken connection) is not: a
// new stream is opened on the same channel (which may reach another replica) with the same
// first request, backing off with jitter, until the grant's guarded deadline passes (its
// lifetime then reports the loss). Sequences keep rising across streams; the deadline does not
// move while the stream is down.
//
// A stream that stops answering is broken too: a replica whose host froze, or a partition that
// leaves its connection open, ends nothing. While answers are due (a lease; a leadership once
// it leads: spec.awaitsAnswers), a request left unanswered for a quarter of the ttl (the
// requests' own period; a healthy replica answers within a Redis round) gets its stream
// superseded: a new one is opened at once, with the same first request. The silent one sends
// nothing more but is still read (a replica that was only slow may still answer, and that
// answer counts, dated by the send time of the request it echoes); it is cancelled (a
// RST_STREAM in grpc-go, never a half-close, which would give the grant back) once the new one
// has answered, or when the machinery stops. Silence is no loss. round_robin still counts the
// silent replica ready and hands new streams to the replicas in turn, so a replacement may land
// on it again: until its first answer it is held to a third of the bound, and every reopen after
// a silence goes at once (each silence took its bound of time already, which paces them).
type keptStream[Req, Resp any] struct {
	c          *Client
	life       *lifetime
	spec       streamSpec[Req, Resp]
	root       context.Context // every stream's context; cancelled when the machinery stops
	cancelRoot context.CancelFunc

	mu            sync.Mutex // one Send/CloseSend at a time, as grpc-go requires, and the fields below
	sent          sendLog
	minSeq        uint64          // answers that echo an earlier sequence are ignored (a ttl change)
	conn          bidi[Req, Resp] // the open stream; nil while down
	closeSent     bool            // CloseSend went out on conn
	closeReq      bool            // the holder gives the grant up, or it was lost
	reopenToClose bool            // a holder's half-close that reopens a stream that is down to go out
	waits         []*seqWait

	streamCancel context.CancelFunc      // cancels the open stream
	streamFirst  uint64                  // the sequence of the open stream's first request
	echoed       uint64                  // the highest sequence an answer on the open stream echoed
	silenceCheck stopper                 // on the client's clock: when the oldest unanswered request is due
	silenced     chan struct{}           // closed when the open stream is superseded for its silence
	replacing    bool                    // the open stream replaces a silent one and has not answered yet
	slowest      slowestAnswer           // the silence bound grows with it
	left         []leftStream[Req, Resp] // superseded streams, still read, not cancelled yet

	poke     chan struct{} // restarts the request timer (the ttl changed)
	final    chan struct{} // closed when the machinery has stopped; finalErr is then set
	finalErr error         // how the last stream ended (nil: OK), or errNoStream
}

// leftStream is a stream superseded for its silence: still read, cancelled later.
type leftStream[Req, Resp any] struct {
	s      bidi[Req, Resp]
	cancel context.CancelFunc
}

// seqWait is a caller waiting for an answer that echoes min or a later sequence.
type seqWait struct {
	min  uint64
	done chan struct{}
}

// startKept opens the first stream (bounded by the call timeout) and sends the first request;
// the machinery then runs on its own. An error is the first open's.
func startKept[Req, Resp any](c *Client, life *lifetime, spec streamSpec[Req, Resp]) (*keptStream[Req, Resp], error) {
	root, cancel := context.WithCancel(context.Background())
	ks := &keptStream[Req, Resp]{c: c, life: life, spec: spec, root: root, cancelRoot: cancel,
		poke: make(chan struct{}, 1), final: make(chan struct{})}
	s, streamCancel, err := ks.open(false, false)
	if err != nil {
		cancel()
		return nil, err
	}
	go ks.run(s, streamCancel)
	life.setOnLoss(ks.lost)
	return ks, nil
}

// open opens a stream and sends its first request (then the half-close, if one is waiting);
// replacing: in place of a silent one.
func (ks *keptStream[Req, Resp]) open(reopen, replacing bool) (bidi[Req, Resp], context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(ks.root)
	timeout := time.AfterFunc(ks.c.callTimeout, cancel)
	s, err := ks.spec.open(ctx, reopen)
	if !timeout.Stop() && err == nil {
		err = status.Error(codes.DeadlineExceeded, "the "+ks.spec.what+" stream did not open within the call timeout")
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	ks.mu.Lock()
	ks.conn, ks.closeSent = s, false
	ks.streamCancel = cancel
	ks.streamFirst, ks.echoed = ks.sent.seq+1, ks.sent.seq
	ks.silenced, ks.replacing = make(chan struct{}), replacing
	ks.sendLocked(true)
	if ks.closeReq {
		ks.closeSent = true
		_ = s.CloseSend()
	}
	ks.mu.Unlock()
	return s, cancel, nil
}

// oldestUnansweredLocked is the sequence of the open stream's oldest request that no answer has
// echoed, or 0.
func (ks *keptStream[Req, Resp]) oldestUnansweredLocked() uint64 {
	oldest := ks.echoed + 1
	if oldest < ks.streamFirst {
		oldest = ks.streamFirst
	}
	if oldest > ks.sent.seq {
		return 0
	}
	return oldest
}

// silenceBoundLocked is how long the open stream's oldest request may wait for an answer: a
// quarter of the ttl, a third of that for a replacement that has not answered yet, or twice the
// slowest recent answer of the grant or its client, up to half the ttl (silenceBound).
func (ks *keptStream[Req, Resp]) silenceBoundLocked() time.Duration {
	now, period := ks.c.clock.Now(), ks.period()
	slowest := ks.slowest.faded(now, period)
	if shared := ks.c.answerTimes.faded(now, period); shared > slowest {
		slowest = shared
	}
	return silenceBound(period, ks.replacing, slowest)
}

// armSilenceLocked arms the check that the open stream's oldest unanswered request is answered
// within the silence bound of its send time.
func (ks *keptStream[Req, Resp]) armSilenceLocked() {
	if ks.silenceCheck != nil || ks.conn == nil || ks.closeSent || ks.closeReq ||
		(ks.spec.awaitsAnswers != nil && !ks.spec.awaitsAnswers()) {
		return
	}
	oldest := ks.oldestUnansweredLocked()
	if oldest == 0 {
		return
	}
	now := ks.c.clock.Now()
	due := now
	if at, ok := ks.sent.at(oldest); ok {
		due = at.Add(ks.silenceBoundLocked())
	}
	s := ks.conn
	ks.silenceCheck = ks.c.clock.AfterFunc(due.Sub(now), func() { ks.checkSilence(s) })
}

func (ks *keptStream[Req, Resp]) stopSilenceLocked() {
	if ks.silenceCheck != nil {
		ks.silenceCheck.Stop()
		ks.silenceCheck = nil
	}
}

// checkSilence runs when the oldest unanswered request of s may have waited the silence bound:
// if it has, s is superseded (left to be read, and cancelled later), and run opens the next
// stream at once.
func (ks *keptStream[Req, Resp]) checkSilence(s bidi[Req, Resp]) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.conn != s {
		return
	}
	ks.silenceCheck = nil
	oldest := ks.oldestUnansweredLocked()
	if oldest == 0 {
		return
	}
	if at, ok := ks.sent.at(oldest); ok && ks.c.clock.Now().Sub(at) < ks.silenceBoundLocked() {
		ks.armSilenceLocked() // a later request is the oldest now
		return
	}
	if ks.closeSent || ks.closeReq || (ks.spec.awaitsAnswers != nil && !ks.spec.awaitsAnswers()) {
		return
	}
	ks.left = append(ks.left, leftStream[Req, Resp]{s, ks.streamCancel})
	ks.conn, ks.streamCancel = nil, nil
	close(ks.silenced) // run opens the next stream
}

// isLeftLocked tells whether s was superseded for its silence.
func (ks *keptStream[Req, Resp]) isLeftLocked(s bidi[Req, Resp]) bool {
	for _, l := range ks.left {
		if l.s == s {
			return true
		}
	}
	return false
}

// sendLocked sends the next request on the open stream; its sequence, or 0 if none is open.
func (ks *keptStream[Req, Resp]) sendLocked(first bool) uint64 {
	if ks.conn == nil || ks.closeSent {
		return 0
	}
	seq := ks.sent.next(ks.c.clock.Now())
	ks.armSilenceLocked() // before the request leaves: its answer may come at once
	// An error means the stream has ended; its Recv reports how.
	_ = ks.conn.Send(ks.spec.request(seq, first))
	return seq
}

// sendNow sends a request now (after change, run under the lock: a new value), in sequence with
// the periodic ones. While the stream is down the next stream's first request carries it.
func (ks *keptStream[Req, Resp]) sendNow(change func()) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if change != nil {
		change()
	}
	ks.sendLocked(false)
}

// changeTTL sends a request with the new ttl through the stream (or, while it is down, makes
// the next stream's first request carry it) and returns a channel closed by the first answer
// that echoes that request's sequence or a later one. Answers echoing an earlier sequence are
// ignored from now on, and the deadline is cut at once to what the new ttl may leave on the
// nodes: send time + ttl*(1-0.01) - 2ms, if that is earlier. Later requests carry the new ttl,
// every ttl/4.
func (ks *keptStream[Req, Resp]) changeTTL(ttl time.Duration) <-chan struct{} {
	ks.mu.Lock()
	ks.life.setTTL(ttl)
	w := &seqWait{done: make(chan struct{})}
	sentAt := ks.c.clock.Now()
	if seq := ks.sendLocked(false); seq != 0 {
		sentAt, _ = ks.sent.at(seq)
		w.min = seq
	} else {
		w.min = ks.sent.seq + 1 // the first request of the next stream
	}
	ks.minSeq = w.min
	ks.waits = append(ks.waits, w)
	ks.life.cut(sentAt.Add(ttl - ttl/100 - 2*time.Millisecond))
	ks.mu.Unlock()
	select {
	case ks.poke <- struct{}{}:
	default:
	}
	return w.done
}

// period is ttl/4 of the current ttl.
func (ks *keptStream[Req, Resp]) period() time.Duration {
	if p := ks.life.currentTTL() / 4; p >= time.Millisecond {
		return p
	}
	return time.Millisecond
}

// run keeps streams going: each until it ends, then a loss, the end of the machinery or a new
// stream, as the end and the grant's state say.
func (ks *keptStream[Req, Resp]) run(s bidi[Req, Resp], cancel context.CancelFunc) {
	defer close(ks.final)
	defer ks.cancelRoot()
	attempt := 0 // reopening attempts since a stream last worked
	for {
		var ended error
		silent := false
		if s != nil {
			began := time.Now()
			var answered bool
			ended, answered, silent = ks.pump(s)
			if !silent {
				cancel() // a superseded stream is cancelled later (see keptStream)
			}
			// A stream that stayed up a while starts the count over, unless it stayed up only to be silent.
			if answered || (!silent && time.Since(began) >= ks.period()) {
				attempt = 0
			}
		}
		ks.mu.Lock()
		closeSent := ks.closeSent
		ks.stopSilenceLocked()
		ks.conn, ks.closeSent = nil, false
		closing := ks.closeReq && !ks.reopenToClose
		reclose := ks.closeReq && ks.reopenToClose && !isLoss(ended)
		ks.mu.Unlock()
		switch {
		case closeSent && !reclose: // the holder half-closed this stream: its end is the answer
			ks.finalErr = ended
			return
		case ks.root.Err() != nil:
			ks.finalErr = errNoStream
			return
		case s != nil && !silent && (isLoss(ended) || refusedForGood(ended)): // "do not retry" (rule 17): a loss
			ks.finalErr = ended
			st := status.Convert(ended)
			if ended == nil {
				st = status.New(codes.Unavailable, "the "+ks.spec.what+" stream ended without the holder asking")
			}
			ks.life.lose(lostError(ks.spec.op, ks.life.resource, st, ended), false)
			return
		case closing:
			ks.finalErr = errNoStream
			return
		}
		// Not a loss: reopen while the grant lasts (a candidate: while the retry policy allows).
		attempt++
		if ks.life.isStarted() {
			if !ks.life.alive() {
				ks.finalErr = ended // the lifetime reports the loss
				return
			}
		} else if attempt >= ks.c.retry.maxAttempts {
			ks.finalErr = ended
			return
		}
		// A replica that was restarted may be back while its subchannel still backs off.
		ks.c.reconnectNow()
		// After a silence the next stream goes at once: the silence took its bound of time
		// already, which paces them (attempt goes on counting, for the backoff of a later end of
		// another kind). Otherwise the server's pushback (rule 17) replaces the backoff. It may
		// outlast the guarded deadline: the lifetime's own timer reports the loss then, which
		// ends this wait.
		pause := time.Duration(0)
		if !silent {
			pause = ks.c.retry.jittered(attempt)
			if d, ok := pushbackOf(ended); ok {
				pause = jitteredPushback(d)
			}
		}
		if sleep(ks.root, pause) != nil {
			ks.finalErr = errNoStream
			return
		}
		var err error
		if s, cancel, err = ks.open(true, silent); err != nil {
			s, ended = nil, err
		}
	}
}

// isLoss tells whether a stream's end (nil: OK) loses the grant rather than calling for a new
// stream.
func isLoss(ended error) bool {
	switch status.Code(ended) {
	case codes.OK, codes.NotFound, codes.PermissionDenied, codes.Unauthenticated, codes.InvalidArgument:
		return true
	}
	return false
}

// pump sends a request every ttl/4 and takes in the answers until the stream ends (how: nil
// for OK) or is superseded for its silence (silent: its reader goes on reading it, and its end
// says nothing); whether any answer was taken in.
func (ks *keptStream[Req, Resp]) pump(s bidi[Req, Resp]) (ended error, answered, silent bool) {
	ks.mu.Lock()
	silenced := ks.silenced // this stream's: only run opens streams
	ks.mu.Unlock()
	stop := make(chan struct{})
	defer close(stop)
	go ks.tick(s, stop)
	var took int32
	end := make(chan error, 1)
	go func() { end <- ks.read(s, &took) }()
	select {
	case ended = <-end:
		ks.mu.Lock()
		silent = ks.isLeftLocked(s) // superseded as it ended
		ks.mu.Unlock()
	case <-silenced:
		silent = true
	}
	if silent {
		ended = nil
	}
	return ended, atomic.LoadInt32(&took) != 0, silent
}

// read takes in the answers on s until it ends: how (nil: OK). took is set once one was taken in.
func (ks *keptStream[Req, Resp]) read(s bidi[Req, Resp], took *int32) error {
	for {
		resp, err := s.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if ks.take(s, resp) {
			atomic.StoreInt32(took, 1)
		}
		if h := ks.c.testAnswered; h != nil {
			h()
		}
	}
}

// tick sends a request on s every period (restarted when the ttl changes) until stop.
func (ks *keptStream[Req, Resp]) tick(s bidi[Req, Resp], stop <-chan struct{}) {
	t := time.NewTimer(ks.period())
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ks.poke:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		case <-t.C:
			ks.mu.Lock()
			if ks.conn == s {
				ks.sendLocked(false)
			}
			ks.mu.Unlock()
		}
		t.Reset(ks.period())
	}
}

// take dates an answer on s (the open stream, or a superseded one) by the sequence it echoes
// and passes it on; false if it cannot be dated (unknown sequence, or one sent before a ttl
// change) and was ignored.
func (ks *keptStream[Req, Resp]) take(s bidi[Req, Resp], resp Resp) bool {
	seq, validity := ks.spec.echo(resp)
	ks.mu.Lock()
	if ks.conn != s && !ks.isLeftLocked(s) {
		ks.mu.Unlock()
		return false // the open stream's end was being handled: its answers no longer count
	}
	var done []leftStream[Req, Resp]
	if ks.conn == s {
		// Any answer shows the stream works, even one dated before a ttl change (ignored
		// below): the silent streams it replaced are not needed any more.
		if seq > ks.echoed {
			ks.echoed = seq
		}
		ks.replacing = false
		ks.stopSilenceLocked()
		ks.armSilenceLocked()
		done, ks.left = ks.left, nil
	}
	sent, ok := ks.sent.at(seq)
	// Only while answers are due: a candidate's first answer comes when it leads, not late.
	if ok && (ks.spec.awaitsAnswers == nil || ks.spec.awaitsAnswers()) {
		now := ks.c.clock.Now()
		ks.slowest.answered(now.Sub(sent), now, ks.period())
		if ks.conn == s {
			ks.c.answerTimes.answered(now.Sub(sent), now, ks.period())
		}
	}
	ok = ok && seq >= ks.minSeq
	var woken []*seqWait
	if ok {
		kept := ks.waits[:0]
		for _, w := range ks.waits {
			if seq >= w.min {
				woken = append(woken, w)
			} else {
				kept = append(kept, w)
			}
		}
		ks.waits = kept
	}
	ks.mu.Unlock()
	for _, l := range done {
		l.cancel() // a RST_STREAM: the silent replica releases nothing
	}
	if !ok {
		return false
	}
	ks.spec.answered(resp, sent.Add(validity))
	for _, w := range woken {
		close(w.done)
	}
	ks.mu.Lock()
	ks.armSilenceLocked() // the answer may have made a leader of a candidate: answers are due now
	ks.mu.Unlock()
	return true
}

// halfClose gives the grant up: it half-closes the stream (the server releases or resigns it
// and ends the stream) and waits up to timeout (or ctx) for how it ended. While the stream is
// down, reopen says whether to open one more to half-close it; otherwise, or when it did not
// end in time, ok is false and the machinery stops (the grant then runs out).
func (ks *keptStream[Req, Resp]) halfClose(ctx context.Context, timeout time.Duration, reopen bool) (ended error, ok bool) {
	ks.mu.Lock()
	ks.closeReq = true
	ks.reopenToClose = reopen
	if ks.conn != nil && !ks.closeSent {
		ks.closeSent = true
		_ = ks.conn.CloseSend()
	} else if ks.conn == nil && !reopen {
		ks.mu.Unlock()
		ks.cancelRoot()
		return nil, false
	}
	ks.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ks.final:
		if ks.finalErr == errNoStream {
			return nil, false
		}
		return ks.finalErr, true
	case <-t.C:
	case <-ctx.Done():
	}
	ks.cancelRoot()
	return nil, false
}

// lost stops the renewals of a lost grant and gives it back: a half-close of the open stream
// (cancelled once it has ended, or after the call timeout), or the spec's giveBack.
func (ks *keptStream[Req, Resp]) lost() {
	ks.mu.Lock()
	ks.closeReq, ks.reopenToClose = true, false
	open := ks.conn != nil
	if open && !ks.closeSent {
		ks.closeSent = true
		_ = ks.conn.CloseSend()
	}
	ks.mu.Unlock()
	if !open {
		ks.cancelRoot()
		if ks.spec.giveBack != nil {
			ks.spec.giveBack()
		}
		return
	}
	go func() {
		t := time.NewTimer(ks.c.callTimeout)
		defer t.Stop()
		select {
		case <-ks.final:
		case <-t.C:
		}
		ks.cancelRoot()
	}()
}

// cancel stops the renewals without giving the grant back: it runs out at its validity.
func (ks *keptStream[Req, Resp]) cancel() {
	ks.mu.Lock()
	ks.closeReq, ks.reopenToClose = true, false
	ks.mu.Unlock()
	ks.cancelRoot()
}

// jittered is the pause before reopening attempt number attempt (1-based): a random time
// between half and all of the backoff.
func (p retryPolicy) jittered(attempt int) time.Duration {
	d := p.backoff(attempt)
	if d <= 1 {
		return d
	}
	return d/2 + time.Duration(rand.Int63n(int64(d-d/2)+1))
}
