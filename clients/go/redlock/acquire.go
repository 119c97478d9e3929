package redlock

import (
	"context"
	"errors"
	"math"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// maxRefreshes bounds how often a grant that arrived with less than half its validity left is
// asked for again; more means every answer is slow, not the wait.
const maxRefreshes = 3

// Acquire takes the lock on resource for ttl. With WithWait(d) it waits up to d while someone
// else holds it; without, it makes one attempt.
//
// It returns an error wrapping ErrNotAcquired (code ABORTED) when the lock was still held by
// someone else after the wait, and an *Error with the call's gRPC status for every other
// failure. UNAVAILABLE and DEADLINE_EXCEEDED are retried with the same token and the wait that
// is left (UNAVAILABLE until the call's own deadline, the wait plus the call timeout: see
// WithMaxAttempts).
// If the Acquire is given up while a grant may have happened (retries exhausted, ctx ended),
// a Release of its token is sent in the background: nobody else could ever release it.
func (c *Client) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...AcquireOption) (*Lease, error) {
	return c.acquire(ctx, resource, 0, ttl, acquireOptions(opts).wait)
}

// AcquirePermit takes one of the permits permits of the semaphore resource (at most that many
// holders at once), for ttl, waiting (WithWait) while every permit is held. The Lease is a
// lock's in every way (Extend, KeepAlive, Release, fencing token, which rises per permit) and
// says which permit it holds (Permit, 1..permits). Every caller of one semaphore must give the
// same permits (at most 1024): another number fails FAILED_PRECONDITION. A semaphore and a lock
// of the same name are separate.
//
// Errors are as Acquire's: ErrNotAcquired (code ABORTED) when every permit was still held by
// others after the wait. permits below 1 is an *Error with code INVALID_ARGUMENT, and nothing
// is sent.
func (c *Client) AcquirePermit(ctx context.Context, resource string, permits int, ttl time.Duration,
	opts ...AcquireOption) (*Lease, error) {
	if permits < 1 {
		return nil, &Error{Op: "acquire", Resource: resource,
			st: status.Newf(codes.InvalidArgument, "permits must be at least 1, was %d", permits)}
	}
	if permits > math.MaxUint32 {
		permits = math.MaxUint32 // the server refuses anything above 1024 INVALID_ARGUMENT
	}
	return c.acquire(ctx, resource, uint32(permits), ttl, acquireOptions(opts).wait)
}

// TryAcquirePermit makes one attempt (no wait) at a permit: the lease, or (nil, nil) when every
// permit is held by others. Other failures are returned as by AcquirePermit.
func (c *Client) TryAcquirePermit(ctx context.Context, resource string, permits int, ttl time.Duration) (*Lease, error) {
	l, err := c.AcquirePermit(ctx, resource, permits, ttl)
	if errors.Is(err, ErrNotAcquired) {
		return nil, nil
	}
	return l, err
}

// acquire is Acquire (permits 0) and AcquirePermit (permits N).
func (c *Client) acquire(ctx context.Context, resource string, permits uint32, ttl, wait time.Duration) (*Lease, error) {
	token, err := newToken()
	if err != nil {
		return nil, &Error{Op: "acquire", Resource: resource,
			st: status.New(codes.Internal, "no random token: "+err.Error()), cause: err}
	}
	start := time.Now()
	mayHold := false  // an earlier attempt may have been granted: a final failure gives it back
	var permit uint32 // the permit an answer named: a retry under the same token gets the same one
	giveBack := func() { c.giveBack(resource, permits, permit, token) }
	refreshes := 0
	timeouts := 0 // attempts that ended DEADLINE_EXCEEDED: those the retry policy's attempts count
	for attempt := 1; ; {
		// A retry sends the wait that is left. A negative wait goes out as it is: the server
		// answers INVALID_ARGUMENT, as for any malformed request.
		waitLeft := wait
		if wait > 0 && (attempt > 1 || refreshes > 0) {
			if waitLeft = wait - time.Since(start); waitLeft < 0 {
				waitLeft = 0
			}
		}
		req := &redlockv1.AcquireRequest{
			Resource: resource,
			Ttl:      durationpb.New(ttl),
			Wait:     durationpb.New(waitLeft),
			Owner:    c.owner,
			Token:    token,
			Permits:  permits,
		}
		callTimeout := c.callTimeout
		if waitLeft > 0 {
			callTimeout += waitLeft
		}
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		sent := c.clock.Now()
		resp, err := c.svc.Acquire(callCtx, req)
		cancel()

		if err == nil {
			permit = resp.GetLease().GetPermit()
			validity := resp.GetLease().GetValidity().AsDuration()
			deadline := sent.Add(validity)
			left := deadline.Sub(c.clock.Now())
			if left < validity/2 && refreshes < maxRefreshes {
				// Typically the wait for another holder took longer than the ttl: the refreshed
				// answer comes at once and the lease handed out has most of its ttl ahead.
				refreshes++
				mayHold = true
				continue
			}
			if left <= 0 {
				giveBack()
				return nil, &Error{Op: "acquire", Resource: resource, st: status.New(codes.DeadlineExceeded,
					"each grant ran out before its answer arrived")}
			}
			return newLease(c, resource, permit, token, resp.GetLease().GetFencingToken(), ttl, deadline), nil
		}

		if ctxErr := ctx.Err(); ctxErr != nil {
			// The caller gave up with the call in flight: the server may have granted meanwhile,
			// and does not release a lease whose token the caller chose. Only this client can.
			giveBack()
			return nil, abandonedError("acquire", resource, ctxErr, err)
		}
		code := status.Code(err)
		unavailable := code == codes.Unavailable
		timedOut := code == codes.DeadlineExceeded
		if timedOut {
			timeouts++
		}
		unknown := unavailable || timedOut
		// A pushback's wait comes out of the Acquire's wait too: the retry sends what is left.
		pause, retry := retryWait(err, c.retry.backoff(attempt))
		callDeadline := start.Add(wait + c.callTimeout)
		if unavailable {
			retry = retry && c.retry.retriesUnavailable(time.Now().Add(pause), callDeadline)
		} else {
			retry = retry && timedOut && c.retry.retriesTimeout(timeouts)
		}
		if retry {
			mayHold = true
			c.reconnectNow()
			if serr := sleep(ctx, pause); serr != nil {
				giveBack()
				return nil, abandonedError("acquire", resource, serr, nil)
			}
			attempt++
			continue
		}
		if unknown || mayHold {
			giveBack()
		}
		return nil, callError("acquire", resource, err)
	}
}

// TryAcquire makes one attempt (no wait): the lease, or (nil, nil) when someone else holds the
// lock. Other failures are returned as by Acquire.
func (c *Client) TryAcquire(ctx context.Context, resource string, ttl time.Duration) (*Lease, error) {
	l, err := c.Acquire(ctx, resource, ttl)
	if errors.Is(err, ErrNotAcquired) {
		return nil, nil
	}
	return l, err
}

// giveBack releases, fire and forget, whatever an abandoned Acquire's token may hold: the permit
// an answer named, or, when none did, each of the permits (the server releases only the one the
// token holds).
func (c *Client) giveBack(resource string, permits, permit uint32, token string) {
	if permit != 0 || permits == 0 {
		c.releaseQuietly(resource, permit, token)
		return
	}
	for k := uint32(1); k <= permits; k++ {
		c.releaseQuietly(resource, k, token)
	}
}
