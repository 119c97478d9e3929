package redlock

import (
	"context"
	"errors"
	"time"
)

// ErrResigned is what Leadership.Err returns once the leadership was resigned (or closed)
// before it could be lost, as context.Canceled is for a context.
var ErrResigned = errors.New("redlock: leadership resigned")

// Lead runs work while this client leads election. It campaigns with ttl and the CampaignOptions
// among opts (WithValue), waiting as long as it takes, or until ctx ends (see Campaign), then
// calls work with a context that is cancelled the moment the leadership is lost (its Done closes:
// the guarded deadline passed without a renewal, or the stream ended with a loss) or ctx ends, and
// with the leadership (Term is the fencing token for every write work makes).
//
//   - work returns while still leading: Lead resigns and returns work's error (nil: the
//     resign's error, if the resign failed).
//   - the leadership is lost: Lead waits for work to return (its context told it), then
//     returns the loss error (it wraps ErrLeaseLost), or with Requeue campaigns again. An error
//     of work's own (not its context's) is returned as it is, without requeueing.
//   - ctx ends: work's context is cancelled, Lead waits for work, resigns, and returns an error
//     that satisfies errors.Is(err, context.Canceled) (or context.DeadlineExceeded).
//   - work returns an error while leading: Lead resigns and returns it, without requeueing.
func (c *Client) Lead(ctx context.Context, election string, ttl time.Duration,
	work func(ctx context.Context, l *Leadership) error, opts ...LeadOption) error {
	var cfg leadConfig
	for _, o := range opts {
		o.applyLead(&cfg)
	}
	for {
		l, err := c.Campaign(ctx, election, ttl, cfg.campaign...)
		if err != nil {
			return err
		}
		lost, err := c.leadOnce(ctx, l, work)
		if !lost || !cfg.requeue {
			return err
		}
	}
}

// leadOnce runs work on l and ends l; lost tells whether l was lost (err is then the loss, or an
// error of work's own).
func (c *Client) leadOnce(ctx context.Context, l *Leadership,
	work func(ctx context.Context, l *Leadership) error) (lost bool, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-l.Done(): // lost (or resigned by work itself)
			cancel()
		case <-wctx.Done():
		}
	}()
	werr := work(wctx, l)
	if loss := l.life.lossErr(); loss != nil {
		if werr != nil && !errors.Is(werr, context.Canceled) && !errors.Is(werr, context.DeadlineExceeded) &&
			!errors.Is(werr, ErrLeaseLost) {
			return false, werr // work's own failure: no requeue
		}
		return true, loss
	}
	// The resign runs on a context of its own (bounded by the call timeout), so that it happens
	// even when ctx has ended.
	_, rerr := l.Resign(context.Background())
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, abandonedError("lead", l.election, ctxErr, nil)
	}
	if werr != nil {
		return false, werr
	}
	return false, rerr
}
