package redlock

import "time"

// clock is where deadlines are read and their timers armed: the real clock, or in tests one
// that moves only when the test says, so that a check "before / within the guard / after the
// deadline" is made at an exact instant rather than after a sleep.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) stopper
}

// stopper is a timer armed by a clock.
type stopper interface{ Stop() bool }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }
