package redlock

import (
	"testing"
	"time"
)

// Issue 40: a slow replica is not a silent one; a third of the bound was not enough for a
// restarted replica, and every grant reopening every third of a period made it slower.
func TestSilenceBoundIsAtLeastTwiceTheSlowestRecentAnswerUpToTwiceThePeriod(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		replacing bool
		slowest   time.Duration
		want      time.Duration
	}{
		{true, 0, 250 * ms},
		{true, 200 * ms, 400 * ms},
		{false, 600 * ms, 1200 * ms},
		{false, 2000 * ms, 1500 * ms},
	} {
		if got := silenceBound(750*ms, c.replacing, c.slowest); got != c.want {
			t.Errorf("silenceBound(750ms, %v, %v) = %v, want %v", c.replacing, c.slowest, got, c.want)
		}
	}
}

func TestSlowestAnswerFadesByHalfEveryTTLAndLeavesOutOneLaterThanTheTTL(t *testing.T) {
	period := time.Second
	at := time.Unix(1000, 0)
	var a slowestAnswer
	if got := a.faded(at, period); got != 0 {
		t.Fatalf("no answer yet: %v", got)
	}
	a.answered(800*time.Millisecond, at, period)
	a.answered(300*time.Millisecond, at.Add(500*time.Millisecond), period) // faster: the slower one counts
	if got := a.faded(at, period); got != 800*time.Millisecond {
		t.Fatalf("slowest = %v, want 800ms", got)
	}
	if got := a.faded(at.Add(4*period), period); got != 400*time.Millisecond {
		t.Fatalf("a ttl later = %v, want 400ms", got)
	}
	a.answered(4500*time.Millisecond, at.Add(4*period), period) // later than the ttl: a stopped replica
	if got := a.faded(at.Add(4*period), period); got != 400*time.Millisecond {
		t.Fatalf("after an answer later than the ttl = %v, want 400ms", got)
	}
}
