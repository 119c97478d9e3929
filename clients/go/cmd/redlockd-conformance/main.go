// Command redlockd-conformance is the Go runner of the client conformance suite
// (clients/conformance/README.md): it performs one scenario with the redlock client against a
// real server and prints what it observed as JSON lines. It decides nothing; the harness checks.
//
//	redlockd-conformance --server HOST:PORT[,HOST:PORT...] --scenario NAME --resource RESOURCE
//
// Every client it makes is given all the --server addresses (redlock.Dial, round_robin).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"redlockd.dev/go/redlock"
	"redlockd.dev/go/redlockv1"
)

// start is the origin of every time reported; time.Since reads the monotonic clock.
var start = time.Now()

var (
	stdin   = bufio.NewReader(os.Stdin)
	outMu   sync.Mutex
	servers []string
	// hold-many's load (the rolling-restart run).
	holdCount, holdElections int
	holdTTL                  time.Duration
)

type fact = map[string]interface{}

func main() {
	server := flag.String("server", "", "redlockd addresses, HOST:PORT[,HOST:PORT...]")
	scenario := flag.String("scenario", "", "scenario name")
	resource := flag.String("resource", "", "resource to lock")
	flag.IntVar(&holdCount, "count", 0, "hold-many: how many leases")
	flag.IntVar(&holdElections, "elections", 0, "hold-many: how many leaderships")
	ttlMs := flag.Int("ttl-ms", 10000, "hold-many: the ttl of every lease and leadership, in milliseconds")
	flag.Parse()
	holdTTL = time.Duration(*ttlMs) * time.Millisecond
	for _, a := range strings.Split(*server, ",") {
		if a = strings.TrimSpace(a); a != "" {
			servers = append(servers, a)
		}
	}
	if len(servers) == 0 || *scenario == "" {
		fmt.Fprintln(os.Stderr, "usage: redlockd-conformance --server HOST:PORT[,HOST:PORT...] --scenario NAME --resource RESOURCE")
		os.Exit(2)
	}
	run, ok := scenarios[*scenario]
	if !ok {
		fail(fmt.Errorf("unknown scenario %q", *scenario))
	}
	facts, err := run(*resource)
	if err != nil {
		fail(err)
	}
	facts["event"] = "result"
	facts["scenario"] = *scenario
	emit(facts)
	os.Exit(0)
}

var scenarios = map[string]func(r string) (fact, error){
	"acquire-contended":  acquireContended,
	"release-twice":      releaseTwice,
	"extend":             extend,
	"keep-alive":         keepAlive,
	"majority-frozen":    majorityFrozen,
	"lost-answer":        lostAnswer,
	"invalid-argument":   invalidArgument,
	"concurrent-holders": concurrentHolders,
	"campaign-handover":  campaignHandover,
	"observe":            observe,
	"extend-while-kept":  extendWhileKept,
	"replica-restart":    replicaRestart,
	// The harness brings a different fault while the runner waits at "kept"; the runner's part is the same.
	"replica-silent":         replicaRestart,
	"replica-blackhole":      replicaRestart,
	"replica-minority":       replicaRestart,
	"rolling-restart-fast":   replicaRestart,
	"release-during-restart": releaseDuringRestart,
	"shutdown-race":          shutdownRace,
	"hold-many":              holdMany,
	"lead":                   lead,
	"permits":                permits,
}

func acquireContended(r string) (fact, error) {
	ctx := context.Background()
	a, err := newClient().Acquire(ctx, r, 10*time.Second)
	if err != nil {
		return nil, err
	}
	belief := believeLease(a)
	await("held")
	b := newClient() // on its own channel
	try := "none"
	if l, err := b.TryAcquire(ctx, r, 10*time.Second); err != nil {
		return nil, err
	} else if l != nil {
		try = "lease"
		_, _ = l.Release(ctx)
	}
	var competitor interface{}
	if l, err := b.Acquire(ctx, r, 10*time.Second, redlock.WithWait(300*time.Millisecond)); err != nil {
		competitor = errorFact(err)
	} else {
		_, _ = l.Release(ctx)
	}
	valid, remaining, str := a.Valid(), ms(a.Remaining()), a.String()
	belief.end()
	released, err := a.Release(ctx)
	if err != nil {
		return nil, err
	}
	return fact{"fencing_token": token(a), "valid": valid, "remaining_ms": remaining, "lease_string": str,
		"try_acquire": try, "competitor_error": competitor, "released": released}, nil
}

func releaseTwice(r string) (fact, error) {
	ctx := context.Background()
	l, err := newClient().Acquire(ctx, r, 10*time.Second)
	if err != nil {
		return nil, err
	}
	belief := believeLease(l)
	await("held")
	belief.end()
	first, err := l.Release(ctx)
	if err != nil {
		return nil, err
	}
	second, err := l.Release(ctx)
	if err != nil {
		return nil, err
	}
	return fact{"first_release": first, "second_release": second, "valid_after": l.Valid()}, nil
}

func extend(r string) (fact, error) {
	ctx := context.Background()
	l, err := newClient().Acquire(ctx, r, 2*time.Second)
	if err != nil {
		return nil, err
	}
	belief := believeLease(l)
	time.Sleep(500 * time.Millisecond)
	if err := l.Extend(ctx, 3*time.Second); err != nil {
		return nil, err
	}
	remaining := ms(l.Remaining())
	await("extended")
	time.Sleep(2000 * time.Millisecond)
	valid := l.Valid()
	belief.end()
	released, err := l.Release(ctx)
	if err != nil {
		return nil, err
	}
	return fact{"remaining_after_extend_ms": remaining, "valid_after_first_ttl": valid, "released": released}, nil
}

func keepAlive(r string) (fact, error) {
	ctx := context.Background()
	l, err := newClient().Acquire(ctx, r, time.Second)
	if err != nil {
		return nil, err
	}
	belief := believeLease(l)
	if err := l.KeepAlive(); err != nil {
		return nil, err
	}
	var lostMu sync.Mutex
	lost := false
	l.OnLost(func(error) {
		lostMu.Lock()
		lost = true
		lostMu.Unlock()
	})
	time.Sleep(1500 * time.Millisecond)
	await("kept")
	time.Sleep(1500 * time.Millisecond)
	valid := l.Valid()
	belief.end()
	released, err := l.Release(ctx)
	if err != nil {
		return nil, err
	}
	lostMu.Lock()
	defer lostMu.Unlock()
	return fact{"valid_at_end": valid, "lost": lost, "released": released}, nil
}

func majorityFrozen(r string) (fact, error) {
	l, err := newClient().Acquire(context.Background(), r, 2*time.Second)
	if err != nil {
		return nil, err
	}
	belief := believeLease(l)
	defer belief.end()
	if err := l.KeepAlive(); err != nil {
		return nil, err
	}
	type loss struct {
		at, deadline time.Time
		err          error
	}
	var mu sync.Mutex
	calls := 0
	first := make(chan loss, 1)
	l.OnLost(func(err error) {
		at := time.Now()
		deadline := l.Deadline()
		mu.Lock()
		calls++
		mu.Unlock()
		select {
		case first <- loss{at, deadline, err}:
		default:
		}
	})
	time.Sleep(300 * time.Millisecond)
	await("freeze")
	answered := time.Now()
	facts := fact{"margin_ms": nil, "waited_ms": nil, "lost_error": nil}
	select {
	case got := <-first:
		facts["margin_ms"] = ms(got.deadline.Sub(got.at))
		facts["waited_ms"] = ms(got.at.Sub(answered))
		facts["lost_error"] = errorFact(got.err)
	case <-time.After(10 * time.Second):
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	facts["lost_calls"] = calls
	mu.Unlock()
	facts["valid_after_lost"] = l.Valid()
	return facts, nil
}

func lostAnswer(r string) (fact, error) {
	c := newClient(redlock.WithCallTimeout(300 * time.Millisecond))
	await("pause")
	began := time.Now()
	l, err := c.Acquire(context.Background(), r, 10*time.Second)
	elapsed := ms(time.Since(began))
	if err != nil {
		return fact{"acquired": false, "elapsed_ms": elapsed, "released": false, "error": errorFact(err)}, nil
	}
	belief := believeLease(l)
	await("held")
	belief.end()
	// The call timeout of this client is short; the release gets the default one's worth.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	released, err := l.Release(ctx)
	if err != nil { // no answer in time: reported, the harness judges it
		return fact{"acquired": true, "elapsed_ms": elapsed, "release_error": errorFact(err)}, nil
	}
	return fact{"acquired": true, "elapsed_ms": elapsed, "released": released}, nil
}

func invalidArgument(r string) (fact, error) {
	ctx := context.Background()
	c := newClient()
	outcome := func(l *redlock.Lease, err error) interface{} {
		if err != nil {
			return errorFact(err)
		}
		_, _ = l.Release(ctx) // unexpectedly granted: the harness sees null
		return nil
	}
	return fact{
		"empty_resource": outcome(c.Acquire(ctx, "", 10*time.Second)),
		"zero_ttl":       outcome(c.Acquire(ctx, r, 0)),
		"long_resource":  outcome(c.Acquire(ctx, r+strings.Repeat("x", 600), 10*time.Second)),
	}, nil
}

func concurrentHolders(r string) (fact, error) {
	clients := []*redlock.Client{newClient(), newClient()} // each on its own channel
	var mu sync.Mutex
	sections := [][]interface{}{}
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(c *redlock.Client) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				err := c.WithLock(context.Background(), r, 2*time.Second,
					func(ctx context.Context, l *redlock.Lease) error {
						begin := ms(time.Since(start))
						time.Sleep(5 * time.Millisecond)
						end := ms(time.Since(start))
						mu.Lock()
						sections = append(sections, []interface{}{begin, end, token(l)})
						mu.Unlock()
						return nil
					}, redlock.WithWait(20*time.Second))
				if err != nil {
					errs <- err
					return
				}
			}
		}(clients[w%2])
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return fact{"sections": sections}, nil
}

// permits: N + 3 workers, each with a client of its own, share a semaphore of N permits for 4 s.
func permits(r string) (fact, error) {
	const n = 3
	const run = 4 * time.Second
	var mu sync.Mutex // guards acquired, seen and errs
	acquired := 0
	seen := map[int]bool{}
	errs := []interface{}{}
	began := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < n+3; w++ {
		c := newClient()
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			for time.Since(began) < run {
				k, err := permitRound(c, r, n, worker)
				mu.Lock()
				if k != 0 {
					acquired++
					seen[k] = true
				}
				if err != nil {
					errs = append(errs, errorFact(err))
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	permitsSeen := []int{}
	for k := range seen {
		permitsSeen = append(permitsSeen, k)
	}
	sort.Ints(permitsSeen)
	return fact{"acquired": acquired, "permits_seen": permitsSeen, "errors": errs}, nil
}

// errNotReleased is a permit's Release that returned false.
type errNotReleased struct{ permit int }

func (e errNotReleased) Error() string { return fmt.Sprintf("permit %d", e.permit) }

// permitRound takes a permit, keeps it alive, holds it 50 to 150 ms, reports it and releases it.
// It returns the permit (0 when none was granted) and the error met, if any.
func permitRound(c *redlock.Client, r string, n, worker int) (int, error) {
	ctx := context.Background()
	l, err := c.AcquirePermit(ctx, r, n, 2*time.Second, redlock.WithWait(3*time.Second))
	if err != nil {
		return 0, err
	}
	begin := monoNanos()
	if err := l.KeepAlive(); err != nil {
		_, _ = l.Release(ctx)
		return l.Permit(), err
	}
	time.Sleep(time.Duration(50+rand.Intn(101)) * time.Millisecond)
	end := monoNanos()
	emit(fact{"event": "permit", "worker": worker, "permit": l.Permit(), "fencing_token": token(l),
		"start_ns": strconv.FormatInt(begin, 10), "end_ns": strconv.FormatInt(end, 10)})
	released, err := l.Release(ctx)
	if err == nil && !released {
		err = errNotReleased{l.Permit()}
	}
	return l.Permit(), err
}

func campaignHandover(r string) (fact, error) {
	ctx := context.Background()
	ca, cb, cc := newClient(), newClient(), newClient() // each on its own channel
	a, err := ca.Campaign(ctx, r, 2*time.Second, redlock.WithValue("a"))
	if err != nil {
		return nil, err
	}
	belief := believeLeadership(a)
	defer belief.end()
	var lostMu sync.Mutex
	aLost := false
	a.OnLost(func(error) {
		lostMu.Lock()
		aLost = true
		lostMu.Unlock()
	})
	await("leading")

	var cError interface{}
	wait, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if c, err := cc.Campaign(wait, r, 2*time.Second, redlock.WithValue("c")); err != nil {
		cError = errorFact(err)
	} else {
		_, _ = c.Resign(ctx) // unexpectedly led: the harness sees null
	}
	cancel()

	type outcome struct {
		l   *redlock.Leadership
		err error
		at  time.Time
	}
	bDone := make(chan outcome, 1)
	go func() {
		l, err := cb.Campaign(ctx, r, 2*time.Second, redlock.WithValue("b"))
		bDone <- outcome{l, err, time.Now()}
	}()
	time.Sleep(1500 * time.Millisecond) // A leads by its renewals alone by now
	bLedEarly := len(bDone) > 0

	if err := a.Proclaim(ctx, "a2"); err != nil {
		return nil, err
	}
	afterProclaim, err := ca.Leader(ctx, r)
	if err != nil {
		return nil, err
	}

	belief.end()
	began := time.Now()
	resigned, err := a.Resign(ctx)
	if err != nil {
		return nil, err
	}
	var b outcome
	select {
	case b = <-bDone:
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("B's campaign did not return within 10 s of A's resign")
	}
	if b.err != nil {
		return nil, fmt.Errorf("B's campaign: %w", b.err)
	}
	handover := ms(b.at.Sub(began))
	aLeader := a.IsLeader()
	termB, bValue, bLeader := strconv.FormatUint(b.l.Term(), 10), b.l.Value(), b.l.IsLeader()
	bResigned, err := b.l.Resign(ctx)
	if err != nil {
		return nil, err
	}
	second, err := b.l.Resign(ctx)
	if err != nil {
		return nil, err
	}
	atEnd, err := ca.Leader(ctx, r)
	if err != nil {
		return nil, err
	}
	lostMu.Lock()
	defer lostMu.Unlock()
	return fact{"term_a": strconv.FormatUint(a.Term(), 10), "c_error": cError, "b_led_early": bLedEarly,
		"leader_after_proclaim": leaderFact(afterProclaim), "resigned": resigned, "handover_ms": handover,
		"a_leader_after_resign": aLeader, "a_lost": aLost, "term_b": termB, "b_value": bValue,
		"b_is_leader": bLeader, "b_resigned": bResigned, "second_resign": second,
		"leader_at_end": leaderFact(atEnd)}, nil
}

func observe(r string) (fact, error) {
	ctx := context.Background()
	c, c2 := newClient(), newClient()
	var mu sync.Mutex
	events := []interface{}{}
	closed := false
	late := 0
	arrived := make(chan struct{}, 1)
	octx, closeO := context.WithCancel(ctx)
	defer closeO()
	states := c.Observe(octx, r)
	go func() {
		for l := range states { // ends when octx does: the channel is closed
			mu.Lock()
			if closed {
				late++
			} else {
				events = append(events, leaderFact(l))
			}
			mu.Unlock()
			select {
			case arrived <- struct{}{}:
			default: // a wake-up is already waiting
			}
		}
	}()
	// reached: at least n changes, the last of them "none" when vacant is set.
	reached := func(n int, vacant bool) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) >= n && (!vacant || events[len(events)-1] == nil)
	}
	awaitEvents := func(n int, vacant bool) {
		limit := time.After(5 * time.Second)
		for !reached(n, vacant) {
			select {
			case <-arrived:
			case <-limit:
				return
			}
		}
	}
	awaitEvents(1, false)

	a, err := c.Campaign(ctx, r, 2*time.Second, redlock.WithValue("a"))
	if err != nil {
		return nil, err
	}
	belief := believeLeadership(a)
	time.Sleep(300 * time.Millisecond)
	belief.end()
	if _, err := a.Resign(ctx); err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond)
	b, err := c2.Campaign(ctx, r, 2*time.Second, redlock.WithValue("b"))
	if err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := b.Resign(ctx); err != nil {
		return nil, err
	}
	// A term may rise while A leads (a sixth change), so B's resign is awaited as a last "none".
	awaitEvents(5, true)
	closeO()
	mu.Lock()
	closed = true
	mu.Unlock()
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	return fact{"events": events, "term_a": strconv.FormatUint(a.Term(), 10),
		"term_b": strconv.FormatUint(b.Term(), 10), "late_events": late}, nil
}

// lead: A leads with work that reports its belief until its context is cancelled by the loss
// (a majority frozen); B's lead, waiting meanwhile, runs its work only after A's was cancelled.
func lead(r string) (fact, error) {
	ctx := context.Background()
	ca, cb := newClient(), newClient() // each on its own channel
	type started struct {
		at   time.Time
		term uint64
	}
	type cancelled struct {
		at, deadline time.Time
	}
	aStarted, aCancelled, aDone := make(chan started, 1), make(chan cancelled, 1), make(chan error, 1)
	go func() {
		aDone <- ca.Lead(ctx, r, 2*time.Second, func(work context.Context, l *redlock.Leadership) error {
			aStarted <- started{time.Now(), l.Term()}
			belief := believeLeadership(l)
			<-work.Done()
			at := time.Now()
			deadline := l.Deadline() // send time + validity, unguarded
			belief.end()
			aCancelled <- cancelled{at, deadline}
			return work.Err()
		}, redlock.WithValue("a"))
	}()
	var a started
	select {
	case a = <-aStarted:
	case err := <-aDone:
		return nil, fmt.Errorf("A's lead ended before its work started: %w", err)
	case <-time.After(10 * time.Second):
		return nil, errors.New("A's work did not start within 10 s")
	}
	await("leading")

	bStarted, bDone := make(chan started, 1), make(chan error, 1)
	go func() {
		bDone <- cb.Lead(ctx, r, 2*time.Second, func(_ context.Context, l *redlock.Leadership) error {
			bStarted <- started{time.Now(), l.Term()}
			return nil // B resigns at once
		}, redlock.WithValue("b"))
	}()
	time.Sleep(300 * time.Millisecond)
	facts := fact{"term_a": strconv.FormatUint(a.term, 10), "b_early": len(bStarted) > 0,
		"cancel_margin_ms": nil, "a_error": nil, "b_after_a_ms": nil, "term_b": nil, "b_result": nil}
	await("freeze")

	limit := time.After(10 * time.Second)
	var aCancel *cancelled
	select {
	case got := <-aCancelled:
		aCancel = &got
		facts["cancel_margin_ms"] = ms(got.deadline.Sub(got.at))
		select {
		case err := <-aDone:
			if err != nil {
				facts["a_error"] = errorFact(err)
			}
		case <-limit:
		}
	case <-limit:
	}
	await("thaw")

	select {
	case err := <-bDone:
		if err == nil {
			facts["b_result"] = "ok"
		} else {
			facts["b_result"] = errorFact(err)
		}
	case <-time.After(10 * time.Second):
	}
	select {
	case b := <-bStarted:
		facts["term_b"] = strconv.FormatUint(b.term, 10)
		if aCancel != nil {
			facts["b_after_a_ms"] = ms(b.at.Sub(aCancel.at))
		}
	default:
	}
	return facts, nil
}

func extendWhileKept(r string) (fact, error) {
	ctx := context.Background()
	l, err := newClient().Acquire(ctx, r, 2*time.Second)
	if err != nil {
		return nil, err
	}
	belief := believeLease(l)
	defer belief.end()
	if err := l.KeepAlive(); err != nil {
		return nil, err
	}
	lost := countLosses(l.OnLost)
	await("kept")
	if err := l.Extend(ctx, 6*time.Second); err != nil { // through the stream (rule 15)
		return nil, err
	}
	await("longer")
	validAfterLonger := l.Valid()
	time.Sleep(500 * time.Millisecond)
	if err := l.Extend(ctx, time.Second); err != nil {
		return nil, err
	}
	remainingAfterShorter := ms(l.Remaining())
	await("shorter")
	lost.wait(3 * time.Second)
	valid := l.Valid()
	belief.end()
	released, err := l.Release(ctx)
	if err != nil {
		return nil, err
	}
	return fact{"fencing_token": token(l), "valid_after_longer": validAfterLonger,
		"remaining_after_shorter_ms": remainingAfterShorter, "lost_calls": lost.calls(), "valid_at_end": valid,
		"released": released}, nil
}

func replicaRestart(r string) (fact, error) {
	ctx := context.Background()
	c := newClient() // given both replicas
	l, err := c.Acquire(ctx, r, 3*time.Second)
	if err != nil {
		return nil, err
	}
	leaseBelief := believeLease(l)
	defer leaseBelief.end()
	if err := l.KeepAlive(); err != nil {
		return nil, err
	}
	leaseLost := countLosses(l.OnLost)
	p, err := c.Campaign(ctx, r, 3*time.Second, redlock.WithValue("a"))
	if err != nil {
		return nil, err
	}
	leadershipBelief := believeLeadership(p)
	defer leadershipBelief.end()
	leadershipLost := countLosses(p.OnLost)
	fencing, term := token(l), strconv.FormatUint(p.Term(), 10)
	await("kept")
	valid, fencingAfter := l.Valid(), token(l)
	isLeader, termAfter := p.IsLeader(), strconv.FormatUint(p.Term(), 10)
	leaseBelief.end()
	released, err := l.Release(ctx)
	if err != nil {
		return nil, err
	}
	leadershipBelief.end()
	resigned, err := p.Resign(ctx)
	if err != nil {
		return nil, err
	}
	return fact{"fencing_token": fencing, "fencing_token_after": fencingAfter, "term": term,
		"term_after": termAfter, "valid": valid, "is_leader": isLeader, "lease_lost_calls": leaseLost.calls(),
		"leadership_lost_calls": leadershipLost.calls(), "released": released, "resigned": resigned}, nil
}

// releaseDuringRestart: three rounds of a lease (not kept) and, right after the harness's SIGTERM
// of a replica, an Extend, a Describe and a Release of it, each noted. No beliefs: the lease is
// released within the round.
func releaseDuringRestart(r string) (fact, error) {
	ctx := context.Background()
	conn, err := redlock.Dial(ctx, servers, grpc.WithInsecure()) // given the three replicas
	if err != nil {
		return nil, err
	}
	c := redlock.New(conn)
	var extended, described, released []interface{}
	for round := 1; round <= 3; round++ {
		l, err := c.Acquire(ctx, r, 10*time.Second)
		if err != nil {
			return nil, err
		}
		await("held")
		if err := l.Extend(ctx, 10*time.Second); err != nil {
			extended = append(extended, errorFact(err))
		} else {
			extended = append(extended, "ok")
		}
		if held, err := describeRetried(ctx, conn, r); err != nil {
			described = append(described, errorFact(err))
		} else {
			described = append(described, held)
		}
		if ok, err := l.Release(ctx); err != nil {
			released = append(released, errorFact(err))
		} else {
			released = append(released, ok)
		}
	}
	return fact{"extends": extended, "describes": described, "releases": released}, nil
}

// describeRetried is a Describe of r on the client's connection (the Go client has no Describe of
// its own), retried as the client retries its idempotent calls: UNAVAILABLE, backoff 50 ms doubling
// up to 1 s, past the 4 attempts until the 5 s call timeout has passed since the first, the
// connection's reconnect backoff reset before each retry; each attempt held to half the call
// timeout, and one that ends so retried at once while the deadline is ahead (a silent replica).
func describeRetried(ctx context.Context, conn *grpc.ClientConn, r string) (bool, error) {
	const callTimeout = 5 * time.Second
	stub := redlockv1.NewLockServiceClient(conn)
	deadline := time.Now().Add(callTimeout)
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout/2)
		resp, err := stub.Describe(callCtx, &redlockv1.DescribeRequest{Resource: r}, grpc.ForceCodec(codec{}))
		cancel()
		if err == nil {
			return resp.GetHeld(), nil
		}
		if status.Code(err) == codes.DeadlineExceeded && time.Now().Before(deadline) {
			continue
		}
		if status.Code(err) != codes.Unavailable || (attempt >= 4 && !time.Now().Add(backoff).Before(deadline)) {
			return false, err
		}
		conn.ResetConnectBackoff()
		time.Sleep(backoff)
		if backoff *= 2; backoff > time.Second {
			backoff = time.Second
		}
	}
}

// codec marshals with google.golang.org/protobuf, as the client's own calls do (Debian's grpc 1.33
// default codec cannot marshal these messages).
type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }
func (codec) Unmarshal(data []byte, v interface{}) error {
	return proto.Unmarshal(data, v.(proto.Message))
}
func (codec) Name() string { return "proto" }

func shutdownRace(r string) (fact, error) {
	ctx := context.Background()
	l, err := newClient().Acquire(ctx, r, 2*time.Second) // given the three replicas
	if err != nil {
		return nil, err
	}
	belief := believeLease(l)
	defer belief.end()
	if err := l.KeepAlive(); err != nil {
		return nil, err
	}
	lost := countLosses(l.OnLost)
	fencing := token(l)
	await("held")
	valid, fencingAfter := l.Valid(), token(l)
	belief.end()
	released, err := l.Release(ctx)
	if err != nil {
		return nil, err
	}
	return fact{"fencing_token": fencing, "fencing_token_after": fencingAfter, "valid": valid,
		"lost_calls": lost.calls(), "released": released}, nil
}

// holdMany is the rolling-restart run's load: many kept leases and leaderships on one client,
// no beliefs; it counts what changed while the harness restarted the replicas.
func holdMany(r string) (fact, error) {
	ctx := context.Background()
	c := newClient()
	type held struct {
		lease *redlock.Lease
		fence uint64
		lost  *losses
	}
	type led struct {
		leadership *redlock.Leadership
		term       uint64
		lost       *losses
	}
	var leases []held
	for i := 0; i < holdCount; i++ {
		l, err := c.Acquire(ctx, fmt.Sprintf("%s/%d", r, i), holdTTL, redlock.WithWait(10*time.Second))
		if err != nil {
			return nil, err
		}
		if err := l.KeepAlive(); err != nil {
			return nil, err
		}
		leases = append(leases, held{l, l.FencingToken(), countLosses(l.OnLost)})
	}
	leaderships := make([]led, holdElections)
	errs := make(chan error, holdElections)
	for i := 0; i < holdElections; i++ {
		go func(i int) {
			p, err := c.Campaign(ctx, fmt.Sprintf("%s/e%d", r, i), holdTTL, redlock.WithValue("go"))
			if err == nil {
				leaderships[i] = led{p, p.Term(), countLosses(p.OnLost)}
			}
			errs <- err
		}(i)
	}
	for i := 0; i < holdElections; i++ {
		if err := <-errs; err != nil {
			return nil, err
		}
	}
	heldAt := time.Now()
	await("held")
	f := fact{"leases": len(leases), "leaderships": len(leaderships)}
	// Each loss with when it came (ms after the "held" await point) and why.
	described := []string{}
	for i, h := range leases {
		if d := h.lost.describe(fmt.Sprintf("lease %d", i), heldAt); d != "" {
			described = append(described, d)
		}
	}
	for i, p := range leaderships {
		if d := p.lost.describe(fmt.Sprintf("leadership %d", i), heldAt); d != "" {
			described = append(described, d)
		}
	}
	f["losses"] = described
	valid, lost, changed, leading, lostLed, termsChanged := 0, 0, 0, 0, 0, 0
	for _, h := range leases {
		if h.lease.Valid() {
			valid++
		}
		lost += h.lost.calls()
		if h.lease.FencingToken() != h.fence {
			changed++
		}
	}
	for _, p := range leaderships {
		if p.leadership.IsLeader() {
			leading++
		}
		lostLed += p.lost.calls()
		if p.leadership.Term() != p.term {
			termsChanged++
		}
	}
	f["leases_valid"], f["leases_lost"], f["fencing_changed"] = valid, lost, changed
	f["leading"], f["leaderships_lost"], f["terms_changed"] = leading, lostLed, termsChanged
	released, resigned := 0, 0
	for _, h := range leases {
		if ok, err := h.lease.Release(ctx); err == nil && ok {
			released++
		}
	}
	for _, p := range leaderships {
		if ok, err := p.leadership.Resign(ctx); err == nil && ok {
			resigned++
		}
	}
	f["released"], f["resigned"] = released, resigned
	return f, nil
}

// losses counts the calls of a loss callback.
type losses struct {
	mu    sync.Mutex
	n     int
	first chan struct{}
	at    time.Time // when the first loss came
	err   error     // what it said
}

func countLosses(onLost func(func(error))) *losses {
	c := &losses{first: make(chan struct{})}
	onLost(func(err error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.n++; c.n == 1 {
			c.at, c.err = time.Now(), err
			close(c.first)
		}
	})
	return c
}

// describe is the first loss, as hold-many reports it: kind, ms after since, and why; "" if none.
func (c *losses) describe(kind string, since time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		return ""
	}
	why := fmt.Sprint(c.err)
	if len(why) > 160 {
		why = why[:160]
	}
	return fmt.Sprintf("%s %+d ms %s", kind, c.at.Sub(since).Milliseconds(), why)
}

// wait waits up to d for the first call.
func (c *losses) wait(d time.Duration) {
	select {
	case <-c.first:
	case <-time.After(d):
	}
}

func (c *losses) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// belief reports what the client believes of one handle, every 20 ms from a goroutine of its
// own, for the harness's belief oracle, until end.
type belief struct {
	handle string
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func believeLease(l *redlock.Lease) *belief {
	return believe("lease", l.Valid, l.Remaining)
}

func believeLeadership(l *redlock.Leadership) *belief {
	return believe("leadership", l.IsLeader, l.Remaining)
}

func believe(handle string, valid func() bool, remaining func() time.Duration) *belief {
	b := &belief{handle: handle, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			// CLOCK_MONOTONIC before and after: the client read its clock between the two.
			before := monoNanos()
			// Validity first: the remaining time read after it can only be smaller.
			v := valid()
			rem := remaining()
			mono := monoNanos()
			if !v {
				rem = 0
			}
			emit(fact{"event": "belief", "handle": handle, "valid": v, "remaining_ms": ms(rem),
				"mono_ns": strconv.FormatInt(mono, 10), "mono_before_ns": strconv.FormatInt(before, 10)})
			select {
			case <-b.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return b
}

// monoNanos reads CLOCK_MONOTONIC, the clock the harness dates Redis's answers by (Go's own
// monotonic readings are relative to the process start, so not comparable across processes).
func monoNanos() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// end stops the reports (none follows) and prints belief-end, once.
func (b *belief) end() {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		emit(fact{"event": "belief-end", "handle": b.handle, "mono_ns": strconv.FormatInt(monoNanos(), 10)})
	})
}

// leaderFact is a leader as [value, "term"], or nil for none.
func leaderFact(l *redlock.Leader) interface{} {
	if l == nil {
		return nil
	}
	return []interface{}{l.Value, strconv.FormatUint(l.Term, 10)}
}

// newClient makes a client with the defaults (unless opts say otherwise) on a channel of its own,
// given every --server address.
func newClient(opts ...redlock.Option) *redlock.Client {
	conn, err := redlock.Dial(context.Background(), servers, grpc.WithInsecure())
	if err != nil {
		fail(err)
	}
	return redlock.New(conn, opts...) // the process exits with its channels open
}

func await(name string) {
	emit(fact{"event": "await", "name": name})
	if _, err := stdin.ReadString('\n'); err != nil && !errors.Is(err, io.EOF) {
		fail(fmt.Errorf("reading the answer to await %s: %w", name, err))
	}
}

func emit(f fact) {
	b, err := json.Marshal(f)
	if err != nil {
		fail(err)
	}
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Println(string(b))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "redlockd-conformance:", err)
	fmt.Println("error:", err)
	os.Exit(1)
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// token is the fencing token as a decimal string (it is a uint64).
func token(l *redlock.Lease) string {
	return strconv.FormatUint(l.FencingToken(), 10)
}

// errorFact reports an error as {"type", "code", "message"}.
func errorFact(err error) fact {
	typ := fmt.Sprintf("%T", err)
	var re *redlock.Error
	var notReleased errNotReleased
	switch {
	case errors.As(err, &notReleased):
		return fact{"type": "NotReleased", "code": "OK", "message": err.Error()}
	case errors.Is(err, redlock.ErrNotAcquired):
		typ = "redlock.ErrNotAcquired"
	case errors.Is(err, redlock.ErrLeaseLost):
		typ = "redlock.ErrLeaseLost"
	case errors.As(err, &re):
		typ = "redlock.Error"
	}
	return fact{"type": typ, "code": codeName(status.Code(err)), "message": err.Error()}
}

// codeName is the gRPC code's name in the upper snake case of the gRPC spec.
func codeName(c codes.Code) string {
	names := map[codes.Code]string{
		codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN",
		codes.InvalidArgument: "INVALID_ARGUMENT", codes.DeadlineExceeded: "DEADLINE_EXCEEDED",
		codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
		codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
		codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED",
		codes.OutOfRange: "OUT_OF_RANGE", codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL",
		codes.Unavailable: "UNAVAILABLE", codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
	}
	if n, ok := names[c]; ok {
		return n
	}
	return "CODE_" + strconv.Itoa(int(c))
}
