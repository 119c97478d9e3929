package redlock

import (
	"context"
	"time"
)

// WithLock runs fn while holding the lock on resource: it acquires (as Acquire, with opts), keeps
// the lease alive, runs fn and releases. fn's context is cancelled when the lease is lost (or
// ctx ends), so that work in progress stops touching the resource; WithLock then returns the
// loss error (it wraps ErrLeaseLost) rather than fn's. Otherwise it returns fn's error.
//
// The release runs on a context of its own, so that it happens even when ctx has ended.
func (c *Client) WithLock(ctx context.Context, resource string, ttl time.Duration,
	fn func(ctx context.Context, l *Lease) error, opts ...AcquireOption) error {
	l, err := c.Acquire(ctx, resource, ttl, opts...)
	if err != nil {
		return err
	}
	return c.withLease(ctx, l, fn)
}

// WithPermit runs fn while holding one of the permits permits of the semaphore resource, as
// WithLock does with a lock: it acquires (as AcquirePermit, with opts), keeps the permit alive,
// runs fn (its context cancelled when the permit is lost) and releases. fn gets the Lease for its
// Permit and FencingToken.
func (c *Client) WithPermit(ctx context.Context, resource string, permits int, ttl time.Duration,
	fn func(ctx context.Context, l *Lease) error, opts ...AcquireOption) error {
	l, err := c.AcquirePermit(ctx, resource, permits, ttl, opts...)
	if err != nil {
		return err
	}
	return c.withLease(ctx, l, fn)
}

// withLease keeps l alive while fn runs, cancelling fn's context on a loss, and releases it.
func (c *Client) withLease(ctx context.Context, l *Lease, fn func(ctx context.Context, l *Lease) error) error {
	defer func() { _, _ = l.Release(context.Background()) }()

	work, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-l.Done(): // lost (or released, after fn)
			cancel()
		case <-work.Done():
		}
	}()
	if err := l.KeepAlive(); err != nil {
		return err
	}
	ferr := fn(work, l)
	if lerr := l.Err(); lerr != nil {
		return lerr
	}
	return ferr
}
