package redlock

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// leadRun is one Lead running in the background: each call of work is reported on started
// (with its context and leadership) and returns what the test puts on finish.
type leadRun struct {
	started chan leadCall
	finish  chan error
	done    chan error
}

type leadCall struct {
	ctx context.Context
	l   *Leadership
}

func startLead(ctx context.Context, c *Client, opts ...LeadOption) *leadRun {
	r := &leadRun{started: make(chan leadCall, 4), finish: make(chan error, 4), done: make(chan error, 1)}
	go func() {
		r.done <- c.Lead(ctx, "jobs", 10*time.Second, func(ctx context.Context, l *Leadership) error {
			r.started <- leadCall{ctx, l}
			return <-r.finish
		}, append([]LeadOption{WithValue("a")}, opts...)...)
	}()
	return r
}

// grantCampaign answers the first request of a Campaign stream: term, value "a", validity 10 s.
func grantCampaign(t *testing.T, s *campaignScript, term uint64) {
	t.Helper()
	first := recv(t, s.reqs, "a campaign's first request")
	s.answers <- campaignAnswer(first.Sequence, term, "a", 10*time.Second)
}

func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

func TestLeadRunsWorkWhileLeadingAndResignsWhenItReturns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result error
	}{
		{"nil", nil},
		{"an error of work's own", errors.New("work failed")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &fakeElections{}
			s := newCampaignScript(e)
			c := startElections(t, e)
			run := startLead(context.Background(), c, Requeue())
			grantCampaign(t, s, 5)
			call := recv(t, run.started, "work")
			if call.l.Term() != 5 || !call.l.IsLeader() || isDone(call.ctx) {
				t.Fatalf("work got %s, ctx done %t", call.l, isDone(call.ctx))
			}
			run.finish <- tc.result
			if err := recv(t, run.done, "Lead's return"); err != tc.result {
				t.Fatalf("Lead returned %v, want work's %v", err, tc.result)
			}
			if end := recv(t, s.recvEnd, "the resign"); end != io.EOF {
				t.Fatalf("the stream ended by %v, want a half-close", end)
			}
			if call.l.Err() != ErrResigned || len(run.started) != 0 {
				t.Fatalf("after Lead: Err %v, %d more runs of work (no requeue)", call.l.Err(), len(run.started))
			}
		})
	}
}

func TestLeadCancelsWorkTheMomentTheGuardedDeadlinePassesAndFailsWithTheLoss(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	clk := newFakeClock()
	c := startElections(t, e, withClock(clk))
	run := startLead(context.Background(), c)
	grantCampaign(t, s, 5)
	call := recv(t, run.started, "work")
	guarded := call.l.Deadline().Add(-guardFor(10 * time.Second))
	clk.set(guarded.Add(-time.Nanosecond))
	if isDone(call.ctx) {
		t.Fatal("work's context cancelled before the guarded deadline")
	}
	clk.set(guarded)
	recv(t, call.ctx.Done(), "work's context cancelled by the loss")
	if !clk.Now().Before(call.l.Deadline()) {
		t.Fatal("cancelled only at the deadline itself")
	}
	select {
	case err := <-run.done:
		t.Fatalf("Lead returned (%v) before work did", err)
	default:
	}
	run.finish <- call.ctx.Err()
	err := recv(t, run.done, "Lead's return")
	if !errors.Is(err, ErrLeaseLost) || err != call.l.Err() || status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Lead returned %v, want the loss %v", err, call.l.Err())
	}
}

func TestLeadWithRequeueCampaignsAgainAfterALossUntilCancelled(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := startLead(ctx, c, Requeue())
	grantCampaign(t, s, 5)
	first := recv(t, run.started, "the first run of work")
	s.end <- status.Error(codes.NotFound, "election 'jobs' was taken over")
	recv(t, first.ctx.Done(), "work's context cancelled by the loss")
	run.finish <- first.ctx.Err()
	recv(t, s.recvEnd, "the first stream's end")

	grantCampaign(t, s, 7) // the second campaign
	second := recv(t, run.started, "the second run of work")
	if second.l == first.l || second.l.Term() != 7 || isDone(second.ctx) {
		t.Fatalf("second run on %s (first %s), ctx done %t", second.l, first.l, isDone(second.ctx))
	}
	cancel()
	recv(t, second.ctx.Done(), "work's context cancelled with Lead's")
	run.finish <- second.ctx.Err()
	err := recv(t, run.done, "Lead's return")
	if !errors.Is(err, context.Canceled) || status.Code(err) != codes.Canceled {
		t.Fatalf("Lead returned %v, want context.Canceled", err)
	}
	if end := recv(t, s.recvEnd, "the resign"); end != io.EOF {
		t.Fatalf("the stream ended by %v, want a half-close", end)
	}
	if second.l.Err() != ErrResigned {
		t.Fatalf("the second leadership: Err %v, want resigned", second.l.Err())
	}
}

func TestLeadDoesNotRequeueWhenWorkFailsOnItsOwnAfterALoss(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	run := startLead(context.Background(), c, Requeue())
	grantCampaign(t, s, 5)
	call := recv(t, run.started, "work")
	s.end <- status.Error(codes.NotFound, "taken over")
	recv(t, call.ctx.Done(), "work's context cancelled by the loss")
	failed := errors.New("the write failed")
	run.finish <- failed
	if err := recv(t, run.done, "Lead's return"); err != failed {
		t.Fatalf("Lead returned %v, want work's own error", err)
	}
}

func TestLeadCancelledWhileCampaigningWithdraws(t *testing.T) {
	e := &fakeElections{}
	s := newCampaignScript(e)
	c := startElections(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	run := startLead(ctx, c)
	recv(t, s.reqs, "the campaign's first request")
	cancel()
	if err := recv(t, run.done, "Lead's return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lead returned %v, want context.Canceled", err)
	}
	if len(run.started) != 0 {
		t.Fatal("work ran without leading")
	}
}
