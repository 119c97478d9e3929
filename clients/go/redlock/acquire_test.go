package redlock

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"redlockd.dev/go/redlockv1"
)

func TestTokenShapeAndReuseAcrossUnavailable(t *testing.T) {
	f := newFake()
	f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, n int) (*redlockv1.AcquireResponse, error) {
		if n == 1 {
			return nil, status.Error(codes.Unavailable, "2 of 5 nodes answered")
		}
		return grant(req, 10*time.Second, 42), nil
	}
	c := start(t, f, fastRetry)
	l, err := c.Acquire(context.Background(), "orders/1", 10*time.Second, WithWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first, second := recv(t, f.acquires, "first Acquire"), recv(t, f.acquires, "retried Acquire")
	if len(first.Token) != 32 {
		t.Fatalf("token has %d characters, want 32", len(first.Token))
	}
	raw, err := base64.RawURLEncoding.DecodeString(first.Token)
	if err != nil || len(raw) != 24 {
		t.Fatalf("token is not 24 bytes of unpadded base64url: %d bytes, %v", len(raw), err)
	}
	if second.Token != first.Token {
		t.Fatal("the retry after UNAVAILABLE carried a different token")
	}
	if w1, w2 := first.Wait.AsDuration(), second.Wait.AsDuration(); w2 > w1 || w1 != time.Second {
		t.Fatalf("waits %s then %s: the retry must send the wait that is left", w1, w2)
	}
	if l.FencingToken() != 42 || l.Resource() != "orders/1" {
		t.Fatalf("lease %s", l)
	}
	if first.Owner == "" {
		t.Fatal("no default owner sent")
	}

	// A second Acquire makes a token of its own.
	if _, err := c.Acquire(context.Background(), "orders/2", time.Second); err != nil {
		t.Fatal(err)
	}
	if other := recv(t, f.acquires, "another Acquire"); other.Token == first.Token {
		t.Fatal("two Acquires share a token")
	}
}

func TestCancelledAcquireReleasesItsToken(t *testing.T) {
	f := newFake()
	entered := make(chan struct{})
	f.acquire = func(ctx context.Context, req *redlockv1.AcquireRequest, _ int) (*redlockv1.AcquireResponse, error) {
		close(entered)
		<-ctx.Done() // the server is still waiting when the caller gives up
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	c := start(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	_, err := c.Acquire(ctx, "orders/1", 10*time.Second, WithWait(5*time.Second))
	if status.Code(err) != codes.Canceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v (code %s), want CANCELLED wrapping context.Canceled", err, status.Code(err))
	}
	sent := recv(t, f.acquires, "Acquire")
	rel := recv(t, f.releases, "the Release of the given-up token")
	if rel.Token != sent.Token || rel.Resource != "orders/1" {
		t.Fatal("the Release does not name the given-up lease")
	}
}

// untilTheDeadline: UNAVAILABLE retried 10 ms apart until the 600 ms call timeout has passed (at
// most 60 attempts: the fake's channels hold 64), past the policy's 4 attempts.
var untilTheDeadline = []Option{retrying(4, 10*time.Millisecond, 10*time.Millisecond), WithCallTimeout(600 * time.Millisecond)}

func TestUnavailableIsRetriedUntilTheCallsDeadlineThenTheTokenIsReleased(t *testing.T) {
	f := newFake()
	f.acquire = func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
		return nil, status.Error(codes.Unavailable, "1 of 5 nodes answered")
	}
	c := start(t, f, untilTheDeadline...)
	began := time.Now()
	_, err := c.Acquire(context.Background(), "orders/1", time.Second)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("got %v, want UNAVAILABLE", err)
	}
	if took := time.Since(began); took < 590*time.Millisecond {
		t.Fatalf("gave up after %s, before the 600 ms call timeout", took)
	}
	token := recv(t, f.acquires, "attempt 1").Token
	attempts := 1
	for len(f.acquires) > 0 {
		if recv(t, f.acquires, "a retry").Token != token {
			t.Fatal("a retry carried another token")
		}
		attempts++
	}
	if attempts <= 4 {
		t.Fatalf("%d attempts: UNAVAILABLE must be retried past the policy's 4 until the call timeout", attempts)
	}
	if rel := recv(t, f.releases, "the Release of the given-up token"); rel.Token != token {
		t.Fatal("the Release does not carry the given-up token")
	}
}

// Rule 2: an Acquire's UNAVAILABLE is bounded by its deadline, and the policy's attempts count
// only its DEADLINE_EXCEEDED (each of which has a timeout of its own).
func TestTheAttemptsOfAnAcquireCountOnlyItsTimeouts(t *testing.T) {
	f := newFake()
	var failures []codes.Code
	var mu sync.Mutex
	f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, _ int) (*redlockv1.AcquireResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) > 0 {
			code := failures[0]
			failures = failures[1:]
			return nil, status.Error(code, "scripted")
		}
		return grant(req, time.Minute, 7), nil
	}
	script := func(want ...codes.Code) {
		mu.Lock()
		failures = want
		mu.Unlock()
	}
	c := start(t, f, retrying(2, time.Millisecond, time.Millisecond))
	script(codes.Unavailable, codes.Unavailable, codes.DeadlineExceeded, codes.Unavailable)
	if _, err := c.Acquire(context.Background(), "orders/1", time.Minute); err != nil {
		t.Fatalf("two attempts, and only one of the four failures timed out: %v", err)
	}
	token := recv(t, f.acquires, "attempt 1").Token
	for i := 2; i <= 5; i++ {
		if recv(t, f.acquires, "a retry").Token != token {
			t.Fatal("a retry carried another token")
		}
	}

	script(codes.DeadlineExceeded, codes.Unavailable, codes.DeadlineExceeded)
	if _, err := c.Acquire(context.Background(), "orders/2", time.Minute); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v, want DEADLINE_EXCEEDED after the second timeout", err)
	}
	for i := 1; i <= 3; i++ {
		recv(t, f.acquires, "an attempt")
	}
	if len(f.acquires) != 0 {
		t.Fatal("retried past the policy's attempts of DEADLINE_EXCEEDED")
	}
}

func TestARetryPolicyOfOneAttemptRetriesNothing(t *testing.T) {
	f := newFake()
	f.acquire = func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
		return nil, status.Error(codes.Unavailable, "1 of 5 nodes answered")
	}
	_, err := start(t, f, retrying(1, 0, 0)).Acquire(context.Background(), "orders/1", time.Second)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("got %v, want UNAVAILABLE", err)
	}
	recv(t, f.acquires, "attempt 1")
	recv(t, f.releases, "the Release of the given-up token")
	if len(f.acquires) != 0 {
		t.Fatal("retried")
	}
}

func TestAbortedIsNotAcquiredAndNotRetried(t *testing.T) {
	f := newFake()
	f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, _ int) (*redlockv1.AcquireResponse, error) {
		return nil, status.Errorf(codes.Aborted, "resource '%s' is held by another owner", req.Resource)
	}
	c := start(t, f, fastRetry)
	_, err := c.Acquire(context.Background(), "orders/1", time.Second)
	if !errors.Is(err, ErrNotAcquired) || status.Code(err) != codes.Aborted {
		t.Fatalf("got %v (code %s), want ErrNotAcquired with ABORTED", err, status.Code(err))
	}
	var re *Error
	if !errors.As(err, &re) || re.Resource != "orders/1" || re.Op != "acquire" {
		t.Fatalf("got %#v, want a *Error naming the resource", err)
	}
	req := recv(t, f.acquires, "Acquire")
	if strings.Contains(err.Error(), req.Token) || !strings.Contains(err.Error(), "orders/1") {
		t.Fatalf("message %q must name the resource and not the token", err)
	}
	if len(f.acquires) != 0 {
		t.Fatal("ABORTED was retried")
	}

	l, err := c.TryAcquire(context.Background(), "orders/1", time.Second)
	if l != nil || err != nil {
		t.Fatalf("TryAcquire of a held lock: %v, %v; want nil, nil", l, err)
	}
}

func TestInvalidArgumentKeepsItsCode(t *testing.T) {
	f := newFake()
	f.acquire = func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
		return nil, status.Error(codes.InvalidArgument, "resource must not be empty")
	}
	c := start(t, f, fastRetry)
	_, err := c.Acquire(context.Background(), "", time.Second)
	if status.Code(err) != codes.InvalidArgument || errors.Is(err, ErrNotAcquired) {
		t.Fatalf("got %v (code %s), want INVALID_ARGUMENT", err, status.Code(err))
	}
	if s, ok := status.FromError(err); !ok || s.Message() != "resource must not be empty" {
		t.Fatalf("the server's status is not reachable: %v", s)
	}
	recv(t, f.acquires, "Acquire")
	if len(f.acquires) != 0 {
		t.Fatal("INVALID_ARGUMENT was retried")
	}
	// The grpc error underneath stays reachable too.
	if u := errors.Unwrap(err); status.Code(u) != codes.InvalidArgument {
		t.Fatalf("Unwrap gives %v", u)
	}
}

func TestDeadlineCountsFromSendTime(t *testing.T) {
	const validity, serverDelay = 10 * time.Second, 300 * time.Millisecond
	f := newFake()
	clk := newFakeClock()
	f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, _ int) (*redlockv1.AcquireResponse, error) {
		clk.set(clk.Now().Add(serverDelay)) // the server's time: the client cannot see where it went
		return grant(req, validity, 1), nil
	}
	c := start(t, f, withClock(clk))
	sent := clk.Now()
	l, err := c.Acquire(context.Background(), "orders/1", validity)
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Deadline(); !d.Equal(sent.Add(validity)) {
		t.Fatalf("deadline %s after the send, want %s", d.Sub(sent), validity)
	}
	guard := 100 * time.Millisecond // min(10s/20, 100ms)
	if r, want := l.Remaining(), validity-serverDelay-guard; r != want {
		t.Fatalf("remaining %s, want the time to the guarded deadline, %s", r, want)
	}
	if !l.Valid() {
		t.Fatal("a fresh lease is not valid")
	}
}

func TestLateGrantIsAskedAgain(t *testing.T) {
	f := newFake()
	clk := newFakeClock()
	f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, n int) (*redlockv1.AcquireResponse, error) {
		if n == 1 {
			clk.set(clk.Now().Add(300 * time.Millisecond)) // more than half the validity
		}
		return grant(req, 400*time.Millisecond, 3), nil
	}
	c := start(t, f, withClock(clk))
	l, err := c.Acquire(context.Background(), "orders/1", 400*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first, again := recv(t, f.acquires, "Acquire"), recv(t, f.acquires, "the refreshing Acquire")
	if again.Token != first.Token {
		t.Fatal("the refresh carried another token")
	}
	if left := l.Deadline().Sub(clk.Now()); left != 400*time.Millisecond {
		t.Fatalf("the lease handed out has %s left of 400ms", left)
	}
	_, _ = l.Release(context.Background())
}
