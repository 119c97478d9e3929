package redlock

import (
	"testing"
	"time"
)

// The retry options are three, so that no two Durations sit side by side; whatever order they
// come in, the policy keeps at least one attempt and a maximum backoff at least the initial one.
func TestRetryOptionsInAnyOrderMakeAUsablePolicy(t *testing.T) {
	c := New(nil, WithMaxBackoff(time.Millisecond), WithInitialBackoff(10*time.Millisecond), WithMaxAttempts(0))
	if want := (retryPolicy{1, 10 * time.Millisecond, 10 * time.Millisecond}); c.retry != want {
		t.Errorf("retry policy %+v, want %+v", c.retry, want)
	}
	c = New(nil, WithInitialBackoff(-time.Second))
	if want := (retryPolicy{4, 0, time.Second}); c.retry != want {
		t.Errorf("retry policy %+v, want %+v (the defaults, the backoff not negative)", c.retry, want)
	}
}

// A wait and a value are named at the call: without them, one attempt and an empty value.
func TestOptionsLeftOutMeanNoWaitAndAnEmptyValue(t *testing.T) {
	if got := acquireOptions(nil).wait; got != 0 {
		t.Errorf("wait without WithWait: %s", got)
	}
	if got := acquireOptions([]AcquireOption{WithWait(time.Second), WithWait(2 * time.Second)}).wait; got != 2*time.Second {
		t.Errorf("the last WithWait counts: %s", got)
	}
	var lead leadConfig
	for _, o := range []LeadOption{WithValue("a"), Requeue()} {
		o.applyLead(&lead)
	}
	if got := campaignOptions(lead.campaign).value; got != "a" || !lead.requeue {
		t.Errorf("Lead's options: value %q, requeue %v", got, lead.requeue)
	}
	if got := campaignOptions(nil).value; got != "" {
		t.Errorf("value without WithValue: %q", got)
	}
}
