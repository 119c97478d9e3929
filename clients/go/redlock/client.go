package redlock

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"redlockd.dev/go/redlockv1"
)

// Client hands out Leases and Leaderships. It keeps the tokens, the deadlines and the renewals
// to itself and is safe for concurrent use. It never dials or closes the connection it is given.
type Client struct {
	svc         redlockv1.LockServiceClient
	elections   redlockv1.ElectionServiceClient
	callTimeout time.Duration
	retry       retryPolicy
	owner       string
	reconnect   func()        // wakes the connection's subchannels that back off (a *grpc.ClientConn); may be nil
	clock       clock         // what deadlines are read on and their timers armed by
	answerTimes sharedAnswers // every kept grant's answer times (keptstream.go)

	testAnswered func() // tests: called after each KeepAlive, Campaign or Observe answer is taken in
}

// Option changes one of the Client's defaults.
type Option func(*Client)

// WithCallTimeout sets the deadline of each call (default 5 s). An Acquire gets its wait on
// top, so that the server has the whole wait plus the usual time for a call.
func WithCallTimeout(d time.Duration) Option {
	return func(c *Client) { c.callTimeout = d }
}

// WithMaxAttempts, WithInitialBackoff and WithMaxBackoff set how UNAVAILABLE (and, for Acquire,
// DEADLINE_EXCEEDED) is retried, the backoff doubling from the initial backoff up to the maximum
// (default 4 attempts, 50 ms, 1 s; a maximum below the initial backoff is raised to it).
// UNAVAILABLE is retried for as long as the wait before the retry ends before the call's own
// deadline (the call timeout from the first attempt; for Acquire, its wait plus the call
// timeout), not for a number of attempts: every call is idempotent, and a replica going away
// answers UNAVAILABLE while another is up. The attempts count an Acquire's attempts that ended
// DEADLINE_EXCEEDED (each has a timeout of its own, so time cannot bound them) and a candidate's
// Campaign streams refused in a row; WithMaxAttempts(1) turns retries off. Retries reuse the
// token, so they can never take a second lock, and each resets the connection's reconnect
// backoff first. (They replace WithRetry(maxAttempts, initialBackoff, maxBackoff), whose two
// Durations in a row compiled just as well swapped.)
func WithMaxAttempts(n int) Option {
	return func(c *Client) { c.retry.maxAttempts = n }
}

// WithInitialBackoff sets the first retry's backoff (default 50 ms): see WithMaxAttempts.
func WithInitialBackoff(d time.Duration) Option {
	return func(c *Client) { c.retry.initialBackoff = d }
}

// WithMaxBackoff sets the longest retry backoff (default 1 s): see WithMaxAttempts.
func WithMaxBackoff(d time.Duration) Option {
	return func(c *Client) { c.retry.maxBackoff = d }
}

// WithOwner sets the free text operators see for this client's leases in Describe (default:
// "<hostname> pid <pid>").
func WithOwner(owner string) Option {
	return func(c *Client) { c.owner = owner }
}

// New makes a Client on cc (typically a *grpc.ClientConn). The caller keeps ownership of cc.
func New(cc grpc.ClientConnInterface, opts ...Option) *Client {
	c := &Client{
		svc:         redlockv1.NewLockServiceClient(codecConn{cc}),
		elections:   redlockv1.NewElectionServiceClient(codecConn{cc}),
		callTimeout: 5 * time.Second,
		retry:       retryPolicy{4, 50 * time.Millisecond, time.Second},
		owner:       defaultOwner(),
		clock:       realClock{},
	}
	if r, ok := cc.(interface{ ResetConnectBackoff() }); ok {
		c.reconnect = r.ResetConnectBackoff
	}
	for _, o := range opts {
		o(c)
	}
	c.retry = c.retry.normalized()
	return c
}

func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}

// String describes the client's settings (it has no secrets).
func (c *Client) String() string {
	return fmt.Sprintf("redlock.Client{owner=%q, callTimeout=%s}", c.owner, c.callTimeout)
}

type retryPolicy struct {
	maxAttempts    int
	initialBackoff time.Duration
	maxBackoff     time.Duration
}

// normalized is p with at least one attempt, no negative backoff and a maximum backoff at least
// the initial one, whatever order the options came in.
func (p retryPolicy) normalized() retryPolicy {
	if p.maxAttempts < 1 {
		p.maxAttempts = 1
	}
	if p.initialBackoff < 0 {
		p.initialBackoff = 0
	}
	if p.maxBackoff < p.initialBackoff {
		p.maxBackoff = p.initialBackoff
	}
	return p
}

// backoff is the pause after failed attempt number attempt (1-based).
func (p retryPolicy) backoff(attempt int) time.Duration {
	shift := attempt - 1
	if shift > 20 {
		shift = 20
	}
	d := p.initialBackoff << uint(shift)
	if d > p.maxBackoff || d < 0 {
		d = p.maxBackoff
	}
	return d
}

// retriesUnavailable tells whether an UNAVAILABLE attempt is followed by a retry at retryAt: if
// that is before the call's deadline.
func (p retryPolicy) retriesUnavailable(retryAt, callDeadline time.Time) bool {
	return p.maxAttempts > 1 && retryAt.Before(callDeadline)
}

// retriesTimeout tells whether an Acquire of which timeouts attempts ended DEADLINE_EXCEEDED is
// tried again.
func (p retryPolicy) retriesTimeout(timeouts int) bool {
	return timeouts < p.maxAttempts
}

// sleep waits d or until ctx ends (its error then).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// attemptTimeout is how long one attempt of an idempotent unary call (not an Acquire: its
// attempts carry its wait, and are counted by the retry policy) waits for its answer: half the
// call timeout. A replica gone silent (a frozen host, a partition: its connection stays open
// until a keepalive ping fails, KeepaliveTime) neither answers nor refuses, and the client cannot
// tell it from a slow one but by time; most calls have no ttl to derive a bound from (Leader,
// Describe). Half the call timeout leaves the retry, which round_robin puts on the next replica,
// as long as the first attempt had, far above what a healthy replica takes (one Redis round).
func attemptTimeout(callTimeout time.Duration) time.Duration {
	return callTimeout / 2
}

// unary runs call with the call timeout, retrying UNAVAILABLE under the retry policy (until the
// call's deadline: the call timeout from the first attempt) while worthIt (nil: always) holds,
// resetting the connection's reconnect backoff before each retry. Each attempt is held to
// attemptTimeout; one that ends so while the deadline is ahead is retried at once (its wait paced
// it). Returns the last call's error unwrapped.
func (c *Client) unary(ctx context.Context, worthIt func() bool, call func(ctx context.Context) error) error {
	deadline := time.Now().Add(c.callTimeout)
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, attemptTimeout(c.callTimeout))
		err := call(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		if status.Code(err) == codes.DeadlineExceeded && time.Now().Before(deadline) && ctx.Err() == nil &&
			c.retry.maxAttempts > 1 && (worthIt == nil || worthIt()) {
			continue // its replica may be silent: round_robin puts the retry on the next one
		}
		wait, retry := retryWait(err, c.retry.backoff(attempt))
		if status.Code(err) != codes.Unavailable || !retry ||
			!c.retry.retriesUnavailable(time.Now().Add(wait), deadline) ||
			ctx.Err() != nil || (worthIt != nil && !worthIt()) {
			return err
		}
		c.reconnectNow()
		if sleep(ctx, wait) != nil {
			return err
		}
	}
}

// reconnectNow wakes the connection's subchannels that back off after failing to connect, so that
// a replica back a moment ago is used at once (gRPC's own backoff grows to minutes).
func (c *Client) reconnectNow() {
	if c.reconnect != nil {
		c.reconnect()
	}
}

// releaseQuietly sends a Release nobody waits for, on a context of its own, retried as any other
// (so that a lease given up is freed through whichever replica is up): for a token whose Acquire
// was given up while its outcome was unknown, or a lease lost. If it fails the lease runs out at
// its ttl.
func (c *Client) releaseQuietly(resource string, permit uint32, token string) {
	go func() {
		_ = c.unary(context.Background(), nil, func(ctx context.Context) error {
			_, err := c.svc.Release(ctx, &redlockv1.ReleaseRequest{Resource: resource, Permit: permit, Token: token})
			return err
		})
	}()
}
