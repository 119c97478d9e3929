package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"redlockd.dev/go/redlockv1"
)

func TestReleaseIsIdempotent(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	c := start(t, f)
	l, err := c.Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	l.OnLost(func(err error) { lost <- err })
	first, err := l.Release(context.Background())
	if !first || err != nil {
		t.Fatalf("first release: %v, %v; want true", first, err)
	}
	second, err := l.Release(context.Background())
	if second || err != nil {
		t.Fatalf("second release: %v, %v; want false, nil", second, err)
	}
	if rel := recv(t, f.releases, "Release"); rel.Token != recv(t, f.acquires, "Acquire").Token {
		t.Fatal("released another token")
	}
	if len(f.releases) != 0 {
		t.Fatal("the second release reached the server")
	}
	recv(t, l.Done(), "Done after release")
	if l.Valid() || l.Remaining() != 0 || l.Err() != nil {
		t.Fatalf("after release: valid %v, remaining %s, err %v", l.Valid(), l.Remaining(), l.Err())
	}
	if err := l.Extend(context.Background(), time.Second); err == nil {
		t.Fatal("extended a released lease")
	}
	if len(lost) != 0 {
		t.Fatal("a release fired the loss callback")
	}
}

func TestReleaseReportsNotHeld(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	f.release = func(context.Context, *redlockv1.ReleaseRequest) (*redlockv1.ReleaseResponse, error) {
		return &redlockv1.ReleaseResponse{Released: false}, nil
	}
	l, err := start(t, f).Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Release(context.Background()); ok || err != nil {
		t.Fatalf("got %v, %v; want false, nil", ok, err)
	}
}

func TestStringHasNoToken(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	c := start(t, f)
	l, err := c.Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	token := recv(t, f.acquires, "Acquire").Token
	for _, s := range []string{l.String(), c.String()} {
		if strings.Contains(s, token) {
			t.Fatalf("%q contains the token", s)
		}
	}
	if s := l.String(); !strings.Contains(s, "orders/1") || !strings.Contains(s, "fencingToken=7") {
		t.Fatalf("%q should name the resource and the fencing token", s)
	}
}

func TestGuardedDeadlineFiresTheLossBeforeTheDeadline(t *testing.T) {
	f := newFake()
	f.acquire = grants(300 * time.Millisecond)
	clk := newFakeClock()
	c := start(t, f, withClock(clk))
	const ttl = 300 * time.Millisecond // guard 15 ms
	l, err := c.Acquire(context.Background(), "orders/1", ttl)
	if err != nil {
		t.Fatal(err)
	}
	type loss struct {
		at  time.Time
		err error
	}
	lost := make(chan loss, 2)
	l.OnLost(func(err error) { lost <- loss{clk.Now(), err} })
	guarded := l.Deadline().Add(-guardFor(ttl))
	clk.set(guarded.Add(-time.Nanosecond))
	if !l.Valid() || l.Err() != nil {
		t.Fatalf("lost a nanosecond before the guarded deadline: %v", l.Err())
	}
	clk.set(guarded) // runs the timer, on this goroutine
	got := recv(t, lost, "the loss")
	if !got.at.Before(l.Deadline()) || got.at.Before(guarded) {
		t.Fatalf("loss reported %s before the deadline, want within the guard", l.Deadline().Sub(got.at))
	}
	if !errors.Is(got.err, ErrLeaseLost) || status.Code(got.err) != codes.DeadlineExceeded {
		t.Fatalf("loss error %v", got.err)
	}
	if l.Valid() || !errors.Is(l.Err(), ErrLeaseLost) {
		t.Fatal("valid after the loss")
	}
	recv(t, l.Done(), "Done after the loss")
}

func TestExtendMovesTheDeadlineAndNotFoundLosesTheLease(t *testing.T) {
	f := newFake()
	f.acquire = grants(time.Second)
	calls := 0
	f.extend = func(_ context.Context, req *redlockv1.ExtendRequest) (*redlockv1.ExtendResponse, error) {
		calls++
		if calls > 1 {
			return nil, status.Errorf(codes.NotFound, "resource '%s' is not held", req.Resource)
		}
		return &redlockv1.ExtendResponse{Lease: &redlockv1.Lease{Resource: req.Resource,
			Validity: req.Ttl, FencingToken: 7}}, nil
	}
	c := start(t, f)
	l, err := c.Acquire(context.Background(), "orders/1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := l.Extend(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := l.Deadline(); d.Before(before.Add(30 * time.Second)) {
		t.Fatalf("deadline %s after the extend, want at least 30s", d.Sub(before))
	}
	lost := make(chan error, 1)
	l.OnLost(func(err error) { lost <- err })
	err = l.Extend(context.Background(), 30*time.Second)
	if !errors.Is(err, ErrLeaseLost) || status.Code(err) != codes.NotFound {
		t.Fatalf("got %v, want ErrLeaseLost with NOT_FOUND", err)
	}
	if got := recv(t, lost, "the loss"); got != err {
		t.Fatalf("callback got %v", got)
	}
	if l.Valid() {
		t.Fatal("valid after NOT_FOUND")
	}
}
