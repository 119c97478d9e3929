package redlock

import (
	"sync"
	"time"
)

// fakeClock is a clock that moves only when a test sets it. Its timers run on the goroutine that
// moves it past them, in the order they are due, before set returns.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	clock *fakeClock
	at    time.Time
	f     func()
	done  bool // fired or stopped
}

// withClock is an Option that puts a client's deadlines on clk.
func withClock(clk clock) Option { return func(c *Client) { c.clock = clk } }

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// set moves the clock to at (never back) and runs every timer due by then.
func (c *fakeClock) set(at time.Time) {
	for {
		c.mu.Lock()
		if at.After(c.now) {
			c.now = at
		}
		var due *fakeTimer
		for _, t := range c.timers {
			if !t.done && !t.at.After(c.now) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
		if due != nil {
			due.done = true
		}
		c.mu.Unlock()
		if due == nil {
			return
		}
		due.f()
	}
}
