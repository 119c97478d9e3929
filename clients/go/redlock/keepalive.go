package redlock

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// sentRing is how many recent request send times a stream remembers. An answer echoes the
// sequence the server had when its renewal began, normally one of the last two or three; one
// that has left the ring is too old to move the deadline anyway.
const sentRing = 16

// sendLog numbers a stream's requests with a rising sequence and remembers when the recent
// ones were sent, so that an answer can be dated by the sequence it echoes. Not safe for
// concurrent use: its stream's send lock guards it.
type sendLog struct {
	seq     uint64
	sentSeq [sentRing]uint64
	sentAt  [sentRing]time.Time
}

// next numbers a request sent now.
func (s *sendLog) next() uint64 {
	s.seq++
	slot := s.seq % sentRing
	s.sentSeq[slot] = s.seq
	s.sentAt[slot] = time.Now()
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

// keeper is the client end of a lease's KeepAlive stream. It sends a request every ttl/4 with a
// rising sequence and moves the lease's deadline with each answer.
//
// The server counts a renewal's validity from when it finished, and its answer may then spend
// any time on the way. So the deadline is counted from the send time of the request whose
// sequence the answer echoes: that renewal began after the request arrived, so the local
// deadline is never later than the server's. Requests every ttl/4 keep that send time recent;
// each renews at once, and the server's own ttl/3 timer, restarted by each renewal, never fires
// first, so renewals are not doubled.
type keeper struct {
	l            *Lease
	stream       redlockv1.LockService_KeepAliveClient
	cancelStream context.CancelFunc // ends the stream without releasing (the lease then runs out)

	sendMu  sync.Mutex // one Send/CloseSend at a time, as grpc-go requires
	closing bool       // the holder half-closed or cancelled: the stream's end is no loss
	sent    sendLog

	stopOnce sync.Once
	stop     chan struct{} // ends the sender
	ended    chan struct{} // closed when the stream has ended; endErr is then set
	endErr   error         // nil: ended OK
}

// startKeeper opens the stream and sends the first request (the server answers it promptly).
// Opening is bounded by the call timeout; the stream itself lives on its own context.
func startKeeper(l *Lease, ttl time.Duration) (*keeper, error) {
	ctx, cancel := context.WithCancel(context.Background())
	timeout := time.AfterFunc(l.c.callTimeout, cancel)
	stream, err := l.c.svc.KeepAlive(ctx)
	if !timeout.Stop() && err == nil {
		err = status.Error(codes.DeadlineExceeded, "the KeepAlive stream did not open within the call timeout")
	}
	if err != nil {
		cancel()
		return nil, err
	}
	k := &keeper{l: l, stream: stream, cancelStream: cancel, stop: make(chan struct{}), ended: make(chan struct{})}
	k.send(ttl)
	go k.receive()
	go k.run()
	return k, nil
}

// run sends a request every ttl/4 (the lease's current ttl) until stopped.
func (k *keeper) run() {
	for {
		period := k.l.currentTTL() / 4
		if period < time.Millisecond {
			period = time.Millisecond
		}
		t := time.NewTimer(period)
		select {
		case <-k.stop:
			t.Stop()
			return
		case <-t.C:
		}
		k.send(k.l.currentTTL())
	}
}

// send sends the next request, recording its send time under its sequence.
func (k *keeper) send(ttl time.Duration) {
	k.sendMu.Lock()
	defer k.sendMu.Unlock()
	if k.closing {
		return
	}
	seq := k.sent.next()
	// An error means the stream has ended; receive reports how.
	_ = k.stream.Send(&redlockv1.KeepAliveRequest{
		Resource: k.l.resource, Token: k.l.token, Ttl: durationpb.New(ttl), Sequence: seq})
}

// sentTime is when the request with sequence seq was sent, if it is still remembered.
func (k *keeper) sentTime(seq uint64) (time.Time, bool) {
	k.sendMu.Lock()
	defer k.sendMu.Unlock()
	return k.sent.at(seq)
}

// receive moves the deadline with each answer and reports the stream's end: a loss, unless
// the holder half-closed or cancelled it.
func (k *keeper) receive() {
	for {
		resp, err := k.stream.Recv()
		if err != nil {
			k.finish(err)
			return
		}
		// An answer this client cannot date (unknown sequence) does not move the deadline.
		if sent, ok := k.sentTime(resp.GetSequence()); ok {
			k.l.renewed(sent.Add(resp.GetLease().GetValidity().AsDuration()))
		}
		if h := k.l.c.testAnswered; h != nil {
			h()
		}
	}
}

func (k *keeper) finish(err error) {
	if errors.Is(err, io.EOF) {
		err = nil
	}
	k.stopSending()
	k.sendMu.Lock()
	closing := k.closing
	k.sendMu.Unlock()
	k.endErr = err
	close(k.ended)
	k.cancelStream()
	if closing {
		return
	}
	st := status.Convert(err)
	if err == nil {
		st = status.New(codes.Unavailable, "the KeepAlive stream ended without the holder asking")
	}
	k.l.lose(lostError("keep-alive", k.l.resource, st, err))
}

func (k *keeper) stopSending() {
	k.stopOnce.Do(func() { close(k.stop) })
}

// halfClose asks the server to release the lease and end the stream, and waits up to timeout
// (or ctx) for how it ended: ok is false when it did not end in time (the stream is then
// cancelled).
func (k *keeper) halfClose(ctx context.Context, timeout time.Duration) (ended error, ok bool) {
	k.sendMu.Lock()
	k.closing = true
	_ = k.stream.CloseSend()
	k.sendMu.Unlock()
	k.stopSending()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-k.ended:
		return k.endErr, true
	case <-t.C:
	case <-ctx.Done():
	}
	k.cancel()
	return nil, false
}

// cancel stops the renewals without releasing: the lease runs out at its validity.
func (k *keeper) cancel() {
	k.sendMu.Lock()
	k.closing = true
	k.sendMu.Unlock()
	k.stopSending()
	k.cancelStream()
}
