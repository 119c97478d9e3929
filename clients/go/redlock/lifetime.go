package redlock

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxGuard caps the guard: the margin by which a grant stops counting as valid before its
// deadline, so that a loss is reported before the deadline passes even by a late timer.
const maxGuard = 100 * time.Millisecond

// guard = min(ttl/20, 100ms).
func guardFor(ttl time.Duration) time.Duration {
	if g := ttl / 20; g < maxGuard {
		return g
	}
	return maxGuard
}

// lifetime is how long a grant (a lease, a leadership) may be relied on: its deadline on the
// monotonic clock, the guard before it, and its loss, reported once. Leases and leaderships
// share it; a kept one is renewed by a keptStream. It calls nothing while holding its lock.
type lifetime struct {
	noun     string // "lease" or "leadership": the Op of its expiry error
	resource string // the lock or the election
	election bool
	clock    clock

	mu        sync.Mutex
	started   bool // a deadline is known (a leadership's from its first answer)
	ttl       time.Duration
	deadline  time.Time // send time + validity, with the monotonic reading
	expiry    stopper   // fires the loss at deadline - guard
	lost      *Error
	ended     bool // given up by the holder (released, resigned)
	callbacks []func(error)
	done      chan struct{} // closed on loss or end
	onLoss    func()        // runs once after the loss is recorded, before the callbacks
}

func newLifetime(clk clock, noun, resource string, election bool, ttl time.Duration) *lifetime {
	return &lifetime{clock: clk, noun: noun, resource: resource, election: election, ttl: ttl,
		done: make(chan struct{})}
}

// start sets the first deadline and arms the guard's timer; false if it was given up first.
func (f *lifetime) start(deadline time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started || f.ended || f.lost != nil {
		return false
	}
	f.started = true
	f.deadline = deadline
	f.scheduleLocked()
	return true
}

func (f *lifetime) guardedLocked() time.Time { return f.deadline.Add(-guardFor(f.ttl)) }

func (f *lifetime) validLocked(now time.Time) bool {
	return f.started && !f.ended && f.lost == nil && now.Before(f.guardedLocked())
}

// valid: started, not ended, not lost, and now < deadline - guard.
func (f *lifetime) valid() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.validLocked(f.clock.Now())
}

// remaining is the time to the guarded deadline; 0 when not valid.
func (f *lifetime) remaining() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.Now()
	if !f.validLocked(now) {
		return 0
	}
	return f.guardedLocked().Sub(now)
}

// alive: started, not lost and its guarded deadline not passed, whether or not the holder is
// giving it up (a resign may still need a stream).
func (f *lifetime) alive() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started && f.lost == nil && f.clock.Now().Before(f.guardedLocked())
}

func (f *lifetime) isStarted() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

func (f *lifetime) deadlineAt() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deadline
}

func (f *lifetime) currentTTL() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ttl
}

// setTTL changes the ttl (and with it the guard).
func (f *lifetime) setTTL(ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ttl = ttl
	if f.started && !f.ended && f.lost == nil {
		f.scheduleLocked()
	}
}

// renewed moves the deadline to d, only forward: an answer reporting an earlier renewal (or
// jeopardy) may arrive after a later one.
func (f *lifetime) renewed(d time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started || f.ended || f.lost != nil || !d.After(f.deadline) {
		return
	}
	f.deadline = d
	f.scheduleLocked()
}

// cut moves the deadline back to d if it is later (a shorter ttl was asked for).
func (f *lifetime) cut(d time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started || f.ended || f.lost != nil || !d.Before(f.deadline) {
		return
	}
	f.deadline = d
	f.scheduleLocked()
}

// set puts the deadline at d, forward or back (a unary Extend sets the ttl anew).
func (f *lifetime) set(ttl time.Duration, d time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started || f.ended || f.lost != nil {
		return
	}
	f.ttl = ttl
	f.deadline = d
	f.scheduleLocked()
}

// scheduleLocked (re)arms the timer that reports the loss at deadline - guard.
func (f *lifetime) scheduleLocked() {
	if f.expiry != nil {
		f.expiry.Stop()
	}
	f.expiry = f.clock.AfterFunc(f.guardedLocked().Sub(f.clock.Now()), f.checkExpiry)
}

// checkExpiry runs when the guarded deadline may have passed; a timer stopped too late for a
// renewal finds the deadline moved and does nothing.
func (f *lifetime) checkExpiry() {
	f.mu.Lock()
	expired := f.started && !f.ended && f.lost == nil && !f.clock.Now().Before(f.guardedLocked())
	f.mu.Unlock()
	if expired {
		f.lose(lostError(f.noun, f.resource, status.New(codes.DeadlineExceeded,
			"the "+f.noun+" ran out: its guarded deadline passed without a renewal"), nil), true)
	}
}

// end gives it up (release, resign): first is true only the first time; wasLost tells whether
// it had been lost before. No loss is reported after it.
func (f *lifetime) end() (first, wasLost bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return false, f.lost != nil
	}
	f.ended = true
	f.stopLocked()
	return true, f.lost != nil
}

func (f *lifetime) stopLocked() {
	if f.expiry != nil {
		f.expiry.Stop()
	}
	select {
	case <-f.done:
	default:
		close(f.done)
	}
}

// lose records the loss with err (once; only once started, never after the end), runs onLoss
// and then the callbacks, each on its own goroutine. onlyIfExpired: only when the guarded
// deadline has passed.
func (f *lifetime) lose(err *Error, onlyIfExpired bool) {
	err.election = f.election
	f.mu.Lock()
	if !f.started || f.ended || f.lost != nil || (onlyIfExpired && f.clock.Now().Before(f.guardedLocked())) {
		f.mu.Unlock()
		return
	}
	f.lost = err
	callbacks, onLoss := f.callbacks, f.onLoss
	f.callbacks = nil
	f.stopLocked()
	f.mu.Unlock()
	if onLoss != nil {
		onLoss()
	}
	for _, fn := range callbacks {
		go fn(err)
	}
}

// setOnLoss sets what a loss stops (the renewals); it runs at once if the loss came first.
func (f *lifetime) setOnLoss(fn func()) {
	f.mu.Lock()
	lost := f.lost != nil
	if !lost {
		f.onLoss = fn
	}
	f.mu.Unlock()
	if lost {
		fn()
	}
}

// onLost registers fn for the loss, or runs it at once (on a goroutine) if it came already.
func (f *lifetime) onLost(fn func(error)) {
	f.mu.Lock()
	lost := f.lost
	if lost == nil {
		f.callbacks = append(f.callbacks, fn)
	}
	f.mu.Unlock()
	if lost != nil {
		go fn(lost)
	}
}

// err is the loss (nil: not lost; never a typed nil).
func (f *lifetime) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lost == nil {
		return nil
	}
	return f.lost
}

func (f *lifetime) lossErr() *Error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
}

func (f *lifetime) isEnded() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}
