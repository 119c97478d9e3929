package redlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"redlockd.dev/go/redlockv1"
)

// Tests of rule 17: the server's early refusal (UNAVAILABLE with grpc-retry-pushback-ms) is
// waited out, at least the pushback and with jitter, by unary retries and by stream reopens;
// "do not retry" stops at once; a kept lease is still lost at its guarded deadline while it
// waits.

// pushbackRetry: the client's own backoff (10 ms doubling to 40 ms) is far below the pushbacks.
var pushbackRetry = retrying(5, 10*time.Millisecond, 40*time.Millisecond)

// refusal is how a swamped server ends a call: UNAVAILABLE, with the pushback trailer.
func refusal(ctx context.Context, pushback string) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs(pushbackKey, pushback))
	return status.Error(codes.Unavailable, "refused early: too many at once")
}

// arrivals notes when each call or stream came, and the token of each.
type arrivals struct {
	mu     sync.Mutex
	times  []time.Time
	tokens []string
}

func (a *arrivals) note(token string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.times = append(a.times, time.Now())
	a.tokens = append(a.tokens, token)
	return len(a.times)
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.times)
}

// assertWaitedWithJitter: count gaps, each at least the pushback, not all equal.
func (a *arrivals) assertWaitedWithJitter(t *testing.T, count int, pushback time.Duration) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.times) != count+1 {
		t.Fatalf("%d arrivals, want %d", len(a.times), count+1)
	}
	distinct := map[time.Duration]bool{}
	for i := 1; i < len(a.times); i++ {
		gap := a.times[i].Sub(a.times[i-1])
		if gap < pushback { // the client's wait plus a little transport time
			t.Fatalf("waited %s, pushback %s", gap, pushback)
		}
		distinct[gap] = true
	}
	if len(distinct) < 2 {
		t.Fatalf("the waits are not jittered")
	}
	for _, token := range a.tokens {
		if token != a.tokens[0] {
			t.Fatalf("the token changed between attempts")
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	until := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(until) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestParsePushback(t *testing.T) {
	if d := parsePushback("150"); d != 150*time.Millisecond {
		t.Fatalf("150: %s", d)
	}
	if d := parsePushback(" 0 "); d != 0 {
		t.Fatalf("0: %s", d)
	}
	for _, bad := range []string{"-1", "", "1.5", "soon", "1e3", "-0", "999999999999999999999"} {
		if d := parsePushback(bad); d != doNotRetry {
			t.Fatalf("%q: %s, want do not retry", bad, d)
		}
	}
	seen := map[time.Duration]bool{}
	for i := 0; i < 200; i++ {
		w := jitteredPushback(200 * time.Millisecond)
		if w < 200*time.Millisecond || w > 300*time.Millisecond {
			t.Fatalf("jittered %s", w)
		}
		seen[w] = true
	}
	if len(seen) < 100 {
		t.Fatalf("%d distinct waits of 200", len(seen))
	}
}

func TestAnAcquireRefusedWithPushbackWaitsAtLeastItWithJitterAndKeepsItsToken(t *testing.T) {
	f := newFake()
	var a arrivals
	var lastWait time.Duration
	f.acquire = func(ctx context.Context, req *redlockv1.AcquireRequest, n int) (*redlockv1.AcquireResponse, error) {
		a.note(req.Token)
		if n <= 3 {
			return nil, refusal(ctx, "150")
		}
		lastWait = req.Wait.AsDuration()
		return grant(req, 10*time.Second, 7), nil
	}
	l, err := start(t, f, pushbackRetry).Acquire(context.Background(), "orders/1", 10*time.Second, WithWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	a.assertWaitedWithJitter(t, 3, 150*time.Millisecond)
	if lastWait >= 5*time.Second-450*time.Millisecond { // the waits came out of the Acquire's wait
		t.Fatalf("the last try sent a wait of %s", lastWait)
	}
	if !l.Valid() {
		t.Fatal("not valid")
	}
}

func TestDoNotRetryEndsAnAcquireAtOnceAndGivesTheTokenBack(t *testing.T) {
	f := newFake()
	f.acquire = func(ctx context.Context, req *redlockv1.AcquireRequest, n int) (*redlockv1.AcquireResponse, error) {
		return nil, refusal(ctx, "-1")
	}
	_, err := start(t, f, pushbackRetry).Acquire(context.Background(), "orders/1", 10*time.Second, WithWait(5*time.Second))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("error %v", err)
	}
	if n := len(f.acquires); n != 1 {
		t.Fatalf("%d Acquire calls, want 1", n)
	}
	acquired := <-f.acquires
	if released := recv(t, f.releases, "the Release"); released.Token != acquired.Token {
		t.Fatal("released another token")
	}
}

func TestAUnaryCallRefusedWithPushbackWaitsAtLeastItAndAnUnparsableOneIsDoNotRetry(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	var a arrivals
	f.extend = func(ctx context.Context, req *redlockv1.ExtendRequest) (*redlockv1.ExtendResponse, error) {
		if a.note(req.Token) <= 2 {
			return nil, refusal(ctx, "120")
		}
		return &redlockv1.ExtendResponse{Lease: &redlockv1.Lease{Resource: req.Resource, Token: req.Token,
			Validity: durationpb.New(req.Ttl.AsDuration()), FencingToken: 7}}, nil
	}
	var releases int32
	var mu sync.Mutex
	f.release = func(ctx context.Context, req *redlockv1.ReleaseRequest) (*redlockv1.ReleaseResponse, error) {
		mu.Lock()
		releases++
		mu.Unlock()
		return nil, refusal(ctx, "soon")
	}
	l, err := start(t, f, pushbackRetry).Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(context.Background(), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	a.assertWaitedWithJitter(t, 2, 120*time.Millisecond)
	if _, err := l.Release(context.Background()); status.Code(err) != codes.Unavailable {
		t.Fatalf("release: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if releases != 1 {
		t.Fatalf("%d Release calls, want 1", releases)
	}
}

// refusingKeepAlive refuses the first refuse streams with pushback and echoes on the others.
func refusingKeepAlive(a *arrivals, refuse int, pushback string) func(redlockv1.LockService_KeepAliveServer) error {
	return func(stream redlockv1.LockService_KeepAliveServer) error {
		req, err := stream.Recv()
		if err != nil {
			return err
		}
		if a.note(req.Token) <= refuse {
			return refusal(stream.Context(), pushback)
		}
		for {
			if err := stream.Send(&redlockv1.KeepAliveResponse{Lease: &redlockv1.Lease{Resource: req.Resource,
				Token: req.Token, Validity: durationpb.New(req.Ttl.AsDuration() * 99 / 100), FencingToken: 7},
				State: redlockv1.LeaseState_LEASE_STATE_HELD, Sequence: req.Sequence}); err != nil {
				return err
			}
			if req, err = stream.Recv(); err != nil {
				return nil // half-closed: released
			}
		}
	}
}

func TestAKeptStreamRefusedWithPushbackReopensAfterItWithTheSameTokenAndNoLoss(t *testing.T) {
	f := newFake()
	f.acquire = grants(3 * time.Second)
	var a arrivals
	f.keepAlive = refusingKeepAlive(&a, 3, "150")
	l, err := start(t, f, pushbackRetry).Acquire(context.Background(), "orders/1", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	token := (<-f.acquires).Token
	before := l.Deadline()
	var lost int32
	var mu sync.Mutex
	l.OnLost(func(error) { mu.Lock(); lost++; mu.Unlock() })
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a renewal", func() bool { return l.Deadline().After(before) })
	a.assertWaitedWithJitter(t, 3, 150*time.Millisecond)
	if a.tokens[0] != token || !l.Valid() {
		t.Fatal("another token, or not valid")
	}
	mu.Lock()
	defer mu.Unlock()
	if lost != 0 {
		t.Fatal("reported lost")
	}
}

func TestAKeptLeaseWhoseGuardedDeadlinePassesDuringAPushbackIsLost(t *testing.T) {
	f := newFake()
	f.acquire = grants(800 * time.Millisecond)
	var a arrivals
	f.keepAlive = refusingKeepAlive(&a, 100, "5000")
	l, err := start(t, f, pushbackRetry).Acquire(context.Background(), "orders/1", 800*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 4)
	l.OnLost(func(err error) { lost <- err })
	if err := l.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	got := recv(t, lost, "the loss")
	if !errors.Is(got, ErrLeaseLost) || status.Code(got) != codes.DeadlineExceeded || l.Valid() {
		t.Fatalf("loss %v, valid %v", got, l.Valid())
	}
	recv(t, f.releases, "the lease given back")
	time.Sleep(300 * time.Millisecond)
	if n := a.count(); n != 1 {
		t.Fatalf("%d streams opened, want 1 (waiting the pushback, not reopening)", n)
	}
	if len(lost) != 0 {
		t.Fatal("lost twice")
	}
}

func TestDoNotRetryOnAKeptStreamIsALossWithUnavailable(t *testing.T) {
	f := newFake()
	f.acquire = grants(10 * time.Second)
	var a arrivals
	f.keepAlive = refusingKeepAlive(&a, 100, "-1")
	l, err := start(t, f, pushbackRetry).Acquire(context.Background(), "orders/1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 4)
	l.OnLost(func(err error) { lost <- err })
	// The refusal may come back before KeepAlive returns: it then returns the loss.
	if err := l.KeepAlive(); err != nil && !errors.Is(err, ErrLeaseLost) {
		t.Fatal(err)
	}
	got := recv(t, lost, "the loss")
	if !errors.Is(got, ErrLeaseLost) || status.Code(got) != codes.Unavailable || l.Valid() {
		t.Fatalf("loss %v, valid %v", got, l.Valid())
	}
	recv(t, f.releases, "the lease given back")
	if n := a.count(); n != 1 {
		t.Fatalf("%d streams opened, want 1", n)
	}
}

func TestACampaignRefusedWithPushbackCampaignsAgainAfterItWithTheSameToken(t *testing.T) {
	var a arrivals
	e := &fakeElections{campaign: func(stream redlockv1.ElectionService_CampaignServer) error {
		req, err := stream.Recv()
		if err != nil {
			return err
		}
		if a.note(req.Token) <= 2 {
			return refusal(stream.Context(), "150")
		}
		for {
			if err := stream.Send(&redlockv1.CampaignResponse{Term: 7, Value: req.Value,
				Validity: durationpb.New(req.Ttl.AsDuration() * 99 / 100), State: redlockv1.LeaseState_LEASE_STATE_HELD,
				Sequence: req.Sequence}); err != nil {
				return err
			}
			if req, err = stream.Recv(); err != nil {
				return nil // half-closed: resigned
			}
		}
	}}
	l, err := startElections(t, e, pushbackRetry).Campaign(context.Background(), "jobs", 3*time.Second, WithValue("a"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Term() != 7 {
		t.Fatalf("term %d", l.Term())
	}
	a.assertWaitedWithJitter(t, 2, 150*time.Millisecond)
	if ok, err := l.Resign(context.Background()); !ok || err != nil {
		t.Fatalf("resign: %v %v", ok, err)
	}
}

func TestAnObserveReopenWaitsAtLeastThePushback(t *testing.T) {
	var a arrivals
	e := &fakeElections{observe: func(req *redlockv1.ObserveRequest, stream redlockv1.ElectionService_ObserveServer, n int) error {
		a.note("")
		if n <= 2 {
			return refusal(stream.Context(), "150")
		}
		if err := stream.Send(&redlockv1.ObserveResponse{}); err != nil {
			return err
		}
		<-stream.Context().Done()
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	states := startElections(t, e, pushbackRetry).Observe(ctx, "jobs")
	recv(t, states, "the first state")
	a.assertWaitedWithJitter(t, 2, 150*time.Millisecond)
}
