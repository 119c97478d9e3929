package redlock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// keepAliveStream is a lease's kept stream.
type keepAliveStream = keptStream[*redlockv1.KeepAliveRequest, *redlockv1.KeepAliveResponse]

// Lease is a held lock, or a held permit of a semaphore (see Permit). It knows its deadline on the monotonic clock (the time the request was
// sent plus the validity the server returned); its token stays inside. Safe for concurrent use.
type Lease struct {
	c        *Client
	resource string
	permit   uint32 // 0 for a lock; 1..N for a permit
	token    string
	fencing  uint64    // atomic: the highest any answer carried
	life     *lifetime // deadline, guard, loss

	mu      sync.Mutex
	keeping bool             // a keep-alive stream is open or opening
	keeper  *keepAliveStream // the open one
}

func newLease(c *Client, resource string, permit uint32, token string, fencing uint64, ttl time.Duration,
	deadline time.Time) *Lease {
	l := &Lease{c: c, resource: resource, permit: permit, token: token, fencing: fencing,
		life: newLifetime(c.clock, "lease", resource, false, ttl)}
	l.life.start(deadline)
	return l
}

// Resource is the name of the lock (or of the semaphore).
func (l *Lease) Resource() string { return l.resource }

// Permit is which of the semaphore's permits the lease holds (1..N), as the server granted it;
// 0 for a lock. Extend, KeepAlive and Release name it with the token.
func (l *Lease) Permit() int { return int(l.permit) }

// FencingToken strictly increases per resource (per permit, for a semaphore) across grants: send it with every write the
// lock protects, so that the resource can refuse a write from a holder that lost the lock. It
// is the highest any answer for this lease carried: a renewal after a node fault may report a
// higher one (never a lower one); a resumed stream keeps the same one.
func (l *Lease) FencingToken() uint64 { return atomic.LoadUint64(&l.fencing) }

// fenced raises the fencing token to one an answer carried, never lowering it.
func (l *Lease) fenced(token uint64) {
	for {
		old := atomic.LoadUint64(&l.fencing)
		if token <= old || atomic.CompareAndSwapUint64(&l.fencing, old, token) {
			return
		}
	}
}

// Valid reports whether the lease may still be relied on: not released, not lost, and its
// guarded deadline (deadline - min(ttl/20, 100ms)) not passed.
func (l *Lease) Valid() bool { return l.life.valid() }

// Remaining is the time the lease stays valid (until its guarded deadline); 0 when not valid.
func (l *Lease) Remaining() time.Duration { return l.life.remaining() }

// Deadline is the send time of the request that last granted or renewed the lease plus the
// validity the server returned: the deadline itself, without the guard. It carries the
// monotonic clock reading, so Sub and Until on it are immune to wall-clock steps.
func (l *Lease) Deadline() time.Time { return l.life.deadlineAt() }

// Err is the error the lease was lost with (it wraps ErrLeaseLost), or nil while it was not lost.
func (l *Lease) Err() error { return l.life.err() }

// Done is closed when the lease is lost or released, like a context's Done.
func (l *Lease) Done() <-chan struct{} { return l.life.done }

// OnLost registers fn to be called once, on a goroutine of its own, with the loss error (it
// wraps ErrLeaseLost) when the lease is lost; at once if it already is. It is never called for
// a lease released before it was lost.
func (l *Lease) OnLost(fn func(error)) { l.life.onLost(fn) }

// Extend renews the lease for ttl counted from now.
//
// On a kept lease (after KeepAlive) the new ttl goes through the KeepAlive stream: Extend sends
// a request with it and returns once an answer echoes that request (or a later one); answers
// to earlier requests are ignored from the moment it is sent, a shorter ttl cuts the deadline
// at once, and every later renewal asks for the new ttl, every ttl/4. If no such answer comes
// within the call timeout the error has code DEADLINE_EXCEEDED (the stream goes on with the new
// ttl).
//
// Otherwise it is an Extend call: UNAVAILABLE is retried while the lease is still valid.
// NOT_FOUND means the lease is no longer held: it is lost, and the error wraps ErrLeaseLost.
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) error {
	if err := l.unusable("extend"); err != nil {
		return err
	}
	l.mu.Lock()
	k := l.keeper
	l.mu.Unlock()
	if k != nil {
		return l.extendKept(ctx, k, ttl)
	}

	var resp *redlockv1.ExtendResponse
	var sent time.Time
	err := l.c.unary(ctx, l.Valid, func(ctx context.Context) error {
		var err error
		sent = l.c.clock.Now()
		resp, err = l.c.svc.Extend(ctx, &redlockv1.ExtendRequest{
			Resource: l.resource, Permit: l.permit, Token: l.token, Ttl: durationpb.New(ttl)})
		return err
	})
	if err != nil {
		if status.Code(err) == codes.NotFound {
			l.life.lose(lostError("extend", l.resource, status.Convert(err), err), false)
			if lerr := l.Err(); lerr != nil {
				return lerr
			}
		}
		return callError("extend", l.resource, err)
	}
	// Extend sets the ttl anew, so the deadline may move back (a shorter ttl) as well as forward.
	// Released or lost meanwhile: nothing changes (the renewal came too late to count).
	l.life.set(ttl, sent.Add(resp.GetLease().GetValidity().AsDuration()))
	l.fenced(resp.GetLease().GetFencingToken())
	return nil
}

// extendKept changes the ttl of a kept lease through its stream.
func (l *Lease) extendKept(ctx context.Context, k *keepAliveStream, ttl time.Duration) error {
	answered := k.changeTTL(ttl)
	t := time.NewTimer(l.c.callTimeout)
	defer t.Stop()
	select {
	case <-answered:
		return nil
	case <-l.life.done:
		if err := l.unusable("extend"); err != nil {
			return err
		}
		return nil
	case <-t.C:
		return &Error{Op: "extend", Resource: l.resource, st: status.New(codes.DeadlineExceeded,
			"no KeepAlive answer to the new ttl within the call timeout")}
	case <-ctx.Done():
		return abandonedError("extend", l.resource, ctx.Err(), nil)
	}
}

// Release gives the lease up (stopping its keep-alive). Idempotent: true only on the call that
// released a lease a quorum still held; every later call returns (false, nil), and so does a call
// on a lease lost before (its loss gave it back already). A kept lease is released by
// half-closing its stream; if that does not end cleanly, by a Release call.
func (l *Lease) Release(ctx context.Context) (bool, error) {
	first, wasLost := l.life.end()
	if !first || wasLost {
		// A lost lease was given back when it was lost (a half-close, or a Release through any
		// replica): nothing more to send, and nothing to wait for.
		return false, nil
	}
	l.mu.Lock()
	k := l.keeper
	l.mu.Unlock()

	if k != nil {
		// The half-close is the release's first attempt, held to an attempt's timeout: a stream on
		// a replica gone silent since its last answer never ends, and the Release below is retried
		// on another replica.
		if ended, ok := k.halfClose(ctx, attemptTimeout(l.c.callTimeout), false); ok {
			switch status.Code(ended) {
			case codes.OK:
				return true, nil
			case codes.NotFound:
				return false, nil
			}
		}
		// The stream was down or failed on its way out: fall back to a plain Release.
	}
	var resp *redlockv1.ReleaseResponse
	err := l.c.unary(ctx, nil, func(ctx context.Context) error {
		var err error
		resp, err = l.c.svc.Release(ctx, &redlockv1.ReleaseRequest{Resource: l.resource, Permit: l.permit,
			Token: l.token})
		return err
	})
	if err != nil {
		return false, callError("release", l.resource, err)
	}
	return resp.GetReleased(), nil
}

// KeepAlive binds the lease to a KeepAlive stream: a request every ttl/4 renews it, and each
// answer moves the deadline. A stream that ends because its replica shut down or the
// connection broke is reopened (on the same connection, which may reach another replica) with
// the same token, and the lease goes on with the same fencing token if a renewal lands before
// its guarded deadline. When the stream ends NOT_FOUND (or PERMISSION_DENIED, UNAUTHENTICATED,
// INVALID_ARGUMENT, or OK without the holder asking), or the guarded deadline passes without a
// renewal, the lease is lost. Calling it again is a no-op. An error is the first stream's
// failure to open (the lease is then not kept; KeepAlive may be called again).
func (l *Lease) KeepAlive() error {
	l.mu.Lock()
	if err := l.unusable("keep-alive"); err != nil {
		l.mu.Unlock()
		return err
	}
	if l.keeping {
		l.mu.Unlock()
		return nil
	}
	l.keeping = true
	l.mu.Unlock()

	// Opening the stream may wait for the connection: not under the lock.
	k, err := startKept(l.c, l.life, l.keepAliveSpec())
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.keeping = false
		return callError("keep-alive", l.resource, err)
	}
	if uerr := l.unusable("keep-alive"); uerr != nil {
		k.cancel() // released or lost while the stream opened
		return uerr
	}
	l.keeper = k
	return nil
}

// keepAliveSpec makes the lease's stream: every request names the lease (resource, permit, token) with
// its current ttl, so a reopened stream's first request resumes it on any replica.
func (l *Lease) keepAliveSpec() streamSpec[*redlockv1.KeepAliveRequest, *redlockv1.KeepAliveResponse] {
	return streamSpec[*redlockv1.KeepAliveRequest, *redlockv1.KeepAliveResponse]{
		op:   "keep-alive",
		what: "KeepAlive",
		open: func(ctx context.Context, reopen bool) (bidi[*redlockv1.KeepAliveRequest, *redlockv1.KeepAliveResponse], error) {
			s, err := l.c.svc.KeepAlive(ctx, grpc.WaitForReady(reopen))
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		request: func(seq uint64, _ bool) *redlockv1.KeepAliveRequest {
			return &redlockv1.KeepAliveRequest{Resource: l.resource, Permit: l.permit, Token: l.token,
				Ttl: durationpb.New(l.life.currentTTL()), Sequence: seq}
		},
		echo: func(r *redlockv1.KeepAliveResponse) (uint64, time.Duration) {
			return r.GetSequence(), r.GetLease().GetValidity().AsDuration()
		},
		answered: func(r *redlockv1.KeepAliveResponse, deadline time.Time) {
			l.fenced(r.GetLease().GetFencingToken())
			l.life.renewed(deadline)
		},
		giveBack: func() { l.c.releaseQuietly(l.resource, l.permit, l.token) },
	}
}

// unusable is the error for an operation on a released or lost lease, else nil.
func (l *Lease) unusable(op string) error {
	if lost := l.life.lossErr(); lost != nil {
		return lost
	}
	if l.life.isEnded() {
		return lostError(op, l.resource, status.New(codes.FailedPrecondition, "the lease was released"), nil)
	}
	return nil
}

// String describes the lease without its token; a permit's names the permit.
func (l *Lease) String() string {
	permit := ""
	if l.permit != 0 {
		permit = fmt.Sprintf(", permit=%d", l.permit)
	}
	return fmt.Sprintf("Lease{resource=%q%s, fencingToken=%d, remaining=%s}",
		l.resource, permit, l.FencingToken(), l.Remaining().Round(time.Millisecond))
}
