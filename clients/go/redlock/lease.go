package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// maxGuard caps the guard: the margin by which a lease stops counting as valid before its
// deadline, so that a loss is reported before the deadline passes even by a late timer.
const maxGuard = 100 * time.Millisecond

// Lease is a held lock. It knows its deadline on the monotonic clock (the time the request was
// sent plus the validity the server returned); its token stays inside. Safe for concurrent use.
type Lease struct {
	c        *Client
	resource string
	token    string
	fencing  uint64

	mu        sync.Mutex
	ttl       time.Duration
	deadline  time.Time   // send time + validity, with the monotonic reading
	expiry    *time.Timer // fires the loss at deadline - guard
	lost      *Error
	released  bool
	keeping   bool    // a keep-alive stream is open or opening
	keeper    *keeper // the open one
	callbacks []func(error)
	done      chan struct{}
}

func newLease(c *Client, resource, token string, fencing uint64, ttl time.Duration, deadline time.Time) *Lease {
	l := &Lease{c: c, resource: resource, token: token, fencing: fencing, ttl: ttl,
		deadline: deadline, done: make(chan struct{})}
	l.mu.Lock()
	l.scheduleExpiryLocked()
	l.mu.Unlock()
	return l
}

// Resource is the name of the lock.
func (l *Lease) Resource() string { return l.resource }

// FencingToken strictly increases per resource across grants: send it with every write the
// lock protects, so that the resource can refuse a write from a holder that lost the lock.
func (l *Lease) FencingToken() uint64 { return l.fencing }

// guard = min(ttl/20, 100ms).
func guardFor(ttl time.Duration) time.Duration {
	if g := ttl / 20; g < maxGuard {
		return g
	}
	return maxGuard
}

// validLocked: not released, not lost, and now < deadline - guard.
func (l *Lease) validLocked(now time.Time) bool {
	return !l.released && l.lost == nil && now.Before(l.deadline.Add(-guardFor(l.ttl)))
}

// Valid reports whether the lease may still be relied on: not released, not lost, and its
// guarded deadline (deadline - min(ttl/20, 100ms)) not passed.
func (l *Lease) Valid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validLocked(time.Now())
}

// Remaining is the time the lease stays valid (until its guarded deadline); 0 when not valid.
func (l *Lease) Remaining() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !l.validLocked(now) {
		return 0
	}
	return l.deadline.Add(-guardFor(l.ttl)).Sub(now)
}

// Deadline is the send time of the request that last granted or renewed the lease plus the
// validity the server returned: the deadline itself, without the guard. It carries the
// monotonic clock reading, so Sub and Until on it are immune to wall-clock steps.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Err is the error the lease was lost with (it wraps ErrLeaseLost), or nil while it was not lost.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		return nil // not a typed nil
	}
	return l.lost
}

// Done is closed when the lease is lost or released, like a context's Done.
func (l *Lease) Done() <-chan struct{} { return l.done }

// OnLost registers fn to be called once, on a goroutine of its own, with the loss error (it
// wraps ErrLeaseLost) when the lease is lost; at once if it already is. It is never called for
// a lease released before it was lost.
func (l *Lease) OnLost(fn func(error)) {
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

// Extend renews the lease for ttl counted from now; a kept-alive lease renews with the new ttl
// from then on. UNAVAILABLE is retried while the lease is still valid. NOT_FOUND means the
// lease is no longer held: it is lost, and the error wraps ErrLeaseLost.
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) error {
	l.mu.Lock()
	if err := l.unusableLocked("extend"); err != nil {
		l.mu.Unlock()
		return err
	}
	l.mu.Unlock()

	var resp *redlockv1.ExtendResponse
	var sent time.Time
	err := l.c.unary(ctx, l.Valid, func(ctx context.Context) error {
		var err error
		sent = time.Now()
		resp, err = l.c.svc.Extend(ctx, &redlockv1.ExtendRequest{
			Resource: l.resource, Token: l.token, Ttl: durationpb.New(ttl)})
		return err
	})
	if err != nil {
		if status.Code(err) == codes.NotFound {
			l.lose(lostError("extend", l.resource, status.Convert(err), err))
			if lerr := l.Err(); lerr != nil {
				return lerr
			}
		}
		return callError("extend", l.resource, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released || l.lost != nil {
		return nil // released meanwhile (or lost: the renewal came too late to count)
	}
	// Extend sets the ttl anew, so the deadline may move back (a shorter ttl) as well as forward.
	l.ttl = ttl
	l.deadline = sent.Add(resp.GetLease().GetValidity().AsDuration())
	l.scheduleExpiryLocked()
	return nil
}

// Release gives the lease up (stopping its keep-alive). Idempotent: true only on the call that
// released a lease a quorum still held; every later call returns (false, nil). A kept lease is
// released by half-closing its stream; if that does not end cleanly, by a Release call.
func (l *Lease) Release(ctx context.Context) (bool, error) {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return false, nil
	}
	l.released = true
	wasLost := l.lost != nil
	k := l.keeper
	l.stopLocked()
	l.mu.Unlock()

	if k != nil && !wasLost {
		if ended, ok := k.halfClose(ctx, l.c.callTimeout); ok {
			switch status.Code(ended) {
			case codes.OK:
				return true, nil
			case codes.NotFound:
				return false, nil
			}
		}
		// The stream failed on its way out: fall back to a plain Release.
	}
	var resp *redlockv1.ReleaseResponse
	err := l.c.unary(ctx, nil, func(ctx context.Context) error {
		var err error
		resp, err = l.c.svc.Release(ctx, &redlockv1.ReleaseRequest{Resource: l.resource, Token: l.token})
		return err
	})
	if err != nil {
		return false, callError("release", l.resource, err)
	}
	return resp.GetReleased(), nil
}

// KeepAlive binds the lease to a KeepAlive stream: a request every ttl/4 renews it, and each
// answer moves the deadline. When the stream ends without the holder having asked, or the
// guarded deadline passes without a renewal, the lease is lost. Calling it again is a no-op.
func (l *Lease) KeepAlive() error {
	l.mu.Lock()
	if err := l.unusableLocked("keep-alive"); err != nil {
		l.mu.Unlock()
		return err
	}
	if l.keeping {
		l.mu.Unlock()
		return nil
	}
	l.keeping = true
	ttl := l.ttl
	l.mu.Unlock()

	// Opening the stream may wait for the connection: not under the lock.
	k, err := startKeeper(l, ttl)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.keeping = false
		return callError("keep-alive", l.resource, err)
	}
	if uerr := l.unusableLocked("keep-alive"); uerr != nil {
		k.cancel() // released or lost while the stream opened
		return uerr
	}
	l.keeper = k
	return nil
}

// unusableLocked is the error for an operation on a released or lost lease, else nil.
func (l *Lease) unusableLocked(op string) error {
	if l.released {
		return lostError(op, l.resource, status.New(codes.FailedPrecondition, "the lease was released"), nil)
	}
	if l.lost != nil {
		return l.lost
	}
	return nil
}

// String describes the lease without its token.
func (l *Lease) String() string {
	return fmt.Sprintf("Lease{resource=%q, fencingToken=%d, remaining=%s}",
		l.resource, l.fencing, l.Remaining().Round(time.Millisecond))
}

// renewed moves the deadline to d, only forward: an answer reporting an earlier renewal (or
// jeopardy) may arrive after a later one.
func (l *Lease) renewed(d time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released || l.lost != nil || !d.After(l.deadline) {
		return
	}
	l.deadline = d
	l.scheduleExpiryLocked()
}

// currentTTL is the ttl renewals ask for.
func (l *Lease) currentTTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// scheduleExpiryLocked (re)arms the timer that reports the loss at deadline - guard.
func (l *Lease) scheduleExpiryLocked() {
	if l.expiry != nil {
		l.expiry.Stop()
	}
	at := l.deadline.Add(-guardFor(l.ttl))
	l.expiry = time.AfterFunc(time.Until(at), l.checkExpiry)
}

// checkExpiry runs when the guarded deadline may have passed; a timer stopped too late for a
// renewal finds the deadline moved and does nothing.
func (l *Lease) checkExpiry() {
	l.mu.Lock()
	expired := !l.released && l.lost == nil && !time.Now().Before(l.deadline.Add(-guardFor(l.ttl)))
	l.mu.Unlock()
	if expired {
		l.lose(lostError("lease", l.resource, status.New(codes.DeadlineExceeded,
			"the lease ran out: its guarded deadline passed without a renewal"), nil))
	}
}

// stopLocked ends the timer and closes Done (on loss or release).
func (l *Lease) stopLocked() {
	if l.expiry != nil {
		l.expiry.Stop()
	}
	select {
	case <-l.done:
	default:
		close(l.done)
	}
}

// lose marks the lease lost with err (once; never after a release), stops its keep-alive and
// runs the loss callbacks, each on its own goroutine.
func (l *Lease) lose(err *Error) {
	l.mu.Lock()
	if l.released || l.lost != nil {
		l.mu.Unlock()
		return
	}
	l.lost = err
	callbacks := l.callbacks
	l.callbacks = nil
	k := l.keeper
	l.stopLocked()
	l.mu.Unlock()
	if k != nil {
		k.cancel()
	}
	for _, fn := range callbacks {
		go fn(err)
	}
}
