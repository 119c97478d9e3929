package redlock

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"redlockd.dev/go/redlockv1"
)

// grantsPermit is an acquire handler that grants every call the given permit.
func grantsPermit(permit uint32, validity time.Duration) func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
	return func(_ context.Context, req *redlockv1.AcquireRequest, _ int) (*redlockv1.AcquireResponse, error) {
		a := grant(req, validity, 7)
		a.Lease.Permit = permit
		return a, nil
	}
}

func TestAcquirePermitAsksForNPermitsAndTheLeaseSaysWhichItHolds(t *testing.T) {
	f := newFake()
	f.acquire = grantsPermit(2, 10*time.Second)
	c := start(t, f)
	l, err := c.AcquirePermit(context.Background(), "partner-api", 3, 10*time.Second, WithWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	req := recv(t, f.acquires, "Acquire")
	if req.Permits != 3 {
		t.Fatalf("sent permits %d, want 3", req.Permits)
	}
	if l.Permit() != 2 || l.Resource() != "partner-api" || l.FencingToken() != 7 {
		t.Fatalf("lease %s", l)
	}
	s := l.String()
	if !strings.Contains(s, "permit=2") || !strings.Contains(s, "partner-api") || strings.Contains(s, req.Token) {
		t.Fatalf("%q should name the semaphore and the permit, and never the token", s)
	}

	f.acquire = grants(10 * time.Second)
	lock, err := c.Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if req := recv(t, f.acquires, "a lock's Acquire"); req.Permits != 0 || lock.Permit() != 0 ||
		strings.Contains(lock.String(), "permit") {
		t.Fatalf("a lock is a lock: permits %d, permit %d, %q", req.Permits, lock.Permit(), lock)
	}
}

func TestFewerThanOnePermitIsRefusedBeforeAnythingIsSent(t *testing.T) {
	f := newFake()
	f.acquire = grantsPermit(1, 10*time.Second)
	c := start(t, f)
	for _, n := range []int{0, -1} {
		_, err := c.AcquirePermit(context.Background(), "partner-api", n, 10*time.Second)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "permits") {
			t.Fatalf("permits %d: got %v, want INVALID_ARGUMENT naming permits", n, err)
		}
	}
	if len(f.acquires) != 0 {
		t.Fatal("an Acquire was sent")
	}
}

func TestTryAcquirePermitIsNilWhenEveryPermitIsHeld(t *testing.T) {
	f := newFake()
	f.acquire = func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
		return nil, status.Error(codes.Aborted, "every permit of semaphore 'partner-api' is held")
	}
	l, err := start(t, f).TryAcquirePermit(context.Background(), "partner-api", 2, time.Second)
	if l != nil || err != nil {
		t.Fatalf("got %v, %v; want nil, nil", l, err)
	}
	if req := recv(t, f.acquires, "Acquire"); req.Permits != 2 || req.Wait.AsDuration() != 0 {
		t.Fatalf("sent permits %d, wait %s", req.Permits, req.Wait.AsDuration())
	}
}

func TestExtendAndReleaseCarryThePermit(t *testing.T) {
	f := newFake()
	f.acquire = grantsPermit(2, 10*time.Second)
	extends := make(chan *redlockv1.ExtendRequest, 4)
	f.extend = func(_ context.Context, req *redlockv1.ExtendRequest) (*redlockv1.ExtendResponse, error) {
		extends <- req
		return &redlockv1.ExtendResponse{Lease: &redlockv1.Lease{Resource: req.Resource, Permit: req.Permit,
			Validity: req.Ttl, FencingToken: 7}}, nil
	}
	l, err := start(t, f).AcquirePermit(context.Background(), "partner-api", 3, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(context.Background(), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if req := recv(t, extends, "Extend"); req.Permit != 2 || req.Resource != "partner-api" {
		t.Fatalf("Extend named permit %d of %q, want 2 of partner-api", req.Permit, req.Resource)
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if req := recv(t, f.releases, "Release"); req.Permit != 2 {
		t.Fatalf("Release named permit %d, want 2", req.Permit)
	}
}

func TestEveryKeepAliveRequestCarriesThePermitAcrossAReopenedStream(t *testing.T) {
	f := newFake()
	f.acquire = grantsPermit(3, 10*time.Second)
	s := newScript(f)
	c := start(t, f, fastRetry)
	l, err := c.AcquirePermit(context.Background(), "partner-api", 3, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	first := recv(t, s.reqs, "the first KeepAlive request")
	s.end <- status.Error(codes.Unavailable, "replica shutting down")
	again := recv(t, s.reqs, "the reopened stream's first request")
	for _, r := range []*redlockv1.KeepAliveRequest{first, again} {
		if r.Permit != 3 || r.Resource != "partner-api" {
			t.Fatalf("KeepAlive request named permit %d of %q, want 3 of partner-api", r.Permit, r.Resource)
		}
	}
	if again.Token != first.Token {
		t.Fatal("the reopened stream carried another token")
	}
	if ok, err := l.Release(context.Background()); !ok || err != nil {
		t.Fatalf("release by half-close: %v, %v", ok, err)
	}
}

func TestARetriedPermitAcquireKeepsItsTokenAndPermits(t *testing.T) {
	f := newFake()
	f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, n int) (*redlockv1.AcquireResponse, error) {
		if n == 1 {
			return nil, status.Error(codes.Unavailable, "2 of 5 nodes answered")
		}
		return grantsPermit(2, 10*time.Second)(context.Background(), req, n)
	}
	l, err := start(t, f, fastRetry).AcquirePermit(context.Background(), "partner-api", 3, 10*time.Second, WithWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first, second := recv(t, f.acquires, "Acquire"), recv(t, f.acquires, "the retry")
	if second.Token != first.Token || second.Permits != 3 || first.Permits != 3 {
		t.Fatalf("the retry must carry the same token and permits (permits %d then %d)", first.Permits, second.Permits)
	}
	if l.Permit() != 2 {
		t.Fatalf("permit %d, want the one the server named, 2", l.Permit())
	}
}

func TestAnAbandonedPermitAcquireWhosePermitNoAnswerNamedReleasesEachPermit(t *testing.T) {
	f := newFake()
	f.acquire = func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
		return nil, status.Error(codes.Unavailable, "1 of 5 nodes answered")
	}
	_, err := start(t, f, untilTheDeadline...).AcquirePermit(context.Background(), "partner-api", 4, time.Second)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("got %v, want UNAVAILABLE", err)
	}
	token := recv(t, f.acquires, "Acquire").Token
	var permits []int
	for i := 0; i < 4; i++ {
		r := recv(t, f.releases, "a Release of the given-up token")
		if r.Token != token || r.Resource != "partner-api" {
			t.Fatal("a Release does not name the given-up token and semaphore")
		}
		permits = append(permits, int(r.Permit))
	}
	sort.Ints(permits)
	if want := []int{1, 2, 3, 4}; !equalInts(permits, want) {
		t.Fatalf("released permits %v, want %v", permits, want)
	}
}

func TestALateGrantOfAPermitIsAskedAgainAndGivenBackByItsPermit(t *testing.T) {
	f := newFake()
	clk := newFakeClock()
	f.acquire = func(_ context.Context, req *redlockv1.AcquireRequest, n int) (*redlockv1.AcquireResponse, error) {
		clk.set(clk.Now().Add(500 * time.Millisecond)) // every answer comes after the grant ran out
		return grantsPermit(2, 400*time.Millisecond)(context.Background(), req, n)
	}
	_, err := start(t, f, withClock(clk)).AcquirePermit(context.Background(), "partner-api", 3, 400*time.Millisecond)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v, want DEADLINE_EXCEEDED", err)
	}
	token := recv(t, f.acquires, "Acquire").Token
	for i := 0; i < maxRefreshes; i++ {
		if r := recv(t, f.acquires, "a refresh"); r.Token != token || r.Permits != 3 {
			t.Fatal("a refresh changed the token or the permits")
		}
	}
	if r := recv(t, f.releases, "the give-back"); r.Permit != 2 || r.Token != token {
		t.Fatalf("gave back permit %d, want the one the answers named, 2", r.Permit)
	}
	time.Sleep(50 * time.Millisecond)
	if len(f.releases) != 0 {
		t.Fatal("more than the named permit was released")
	}
}

func TestWithPermitKeepsThePermitAliveWhileTheWorkRunsAndReleases(t *testing.T) {
	f := newFake()
	f.acquire = grantsPermit(2, 10*time.Second)
	s := newScript(f)
	halfClosed := make(chan struct{})
	f.keepAlive = func(stream redlockv1.LockService_KeepAliveServer) error {
		err := s.serve(stream)
		close(halfClosed)
		return err
	}
	var held int
	err := start(t, f).WithPermit(context.Background(), "partner-api", 2, 10*time.Second,
		func(ctx context.Context, l *Lease) error {
			if r := recv(t, s.reqs, "the keep-alive"); r.Permit != 2 {
				t.Errorf("KeepAlive named permit %d, want 2", r.Permit)
			}
			held = l.Permit()
			return nil
		})
	if err != nil || held != 2 {
		t.Fatalf("WithPermit: %v, the work saw permit %d", err, held)
	}
	if req := recv(t, f.acquires, "Acquire"); req.Permits != 2 {
		t.Fatalf("sent permits %d, want 2", req.Permits)
	}
	recv(t, halfClosed, "the release by half-close")
}

func TestWithPermitDoesNotRunTheWorkWhenNotAcquired(t *testing.T) {
	f := newFake()
	f.acquire = func(context.Context, *redlockv1.AcquireRequest, int) (*redlockv1.AcquireResponse, error) {
		return nil, status.Error(codes.Aborted, "every permit is held")
	}
	ran := false
	err := start(t, f).WithPermit(context.Background(), "partner-api", 2, time.Second,
		func(context.Context, *Lease) error { ran = true; return nil })
	if status.Code(err) != codes.Aborted || ran {
		t.Fatalf("got %v (work ran: %v), want ABORTED without the work", err, ran)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
