// Command redlockd-example takes a lock with the Go client, keeps it alive through some work,
// releases it, then does the same with WithLock; then it campaigns in an election it observes,
// leads for a second and resigns; then it leads the same election again with Lead.
//
//	redlockd-example --server 127.0.0.1:50051[,127.0.0.1:50052...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"

	"redlockd.dev/go/redlock"
)

func main() {
	server := flag.String("server", "127.0.0.1:50051", "redlockd addresses, HOST:PORT[,HOST:PORT...]")
	flag.Parse()
	if err := run(*server); err != nil {
		fmt.Fprintln(os.Stderr, "redlockd-example:", err)
		os.Exit(1)
	}
}

func run(server string) error {
	// Every replica: calls and streams are spread over them (round_robin), and a kept stream
	// whose replica shuts down resumes on another. Plaintext, as a dev server listens.
	conn, err := redlock.Dial(context.Background(), strings.Split(server, ","), grpc.WithInsecure())
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx := context.Background()

	// --- README example begins ---
	locks := redlock.New(conn) // the client never closes conn
	lease, err := locks.Acquire(ctx, "examples/go", 10*time.Second, redlock.WithWait(2*time.Second))
	if err != nil {
		return err // errors.Is(err, redlock.ErrNotAcquired): someone else holds it
	}
	fmt.Printf("acquired examples/go: fencing token %d\n", lease.FencingToken())
	if err := lease.KeepAlive(); err != nil { // renewed every ttl/4 until released
		return err
	}
	time.Sleep(2 * time.Second) // the work: send lease.FencingToken() with each write; stop on <-lease.Done()
	if _, err := lease.Release(ctx); err != nil {
		return err
	}
	fmt.Println("released")
	// --- README example ends ---

	// WithLock does the same in one call: fn's ctx is cancelled if the lease is lost.
	err = locks.WithLock(ctx, "examples/go", 10*time.Second,
		func(ctx context.Context, l *redlock.Lease) error {
			fmt.Printf("with lock on examples/go: fencing token %d\n", l.FencingToken())
			return nil
		}, redlock.WithWait(2*time.Second))
	if err != nil {
		return err
	}

	// --- README election example begins ---
	// The current leader, then every change, on a channel closed when its ctx ends.
	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	leaders := locks.Observe(watching, "examples/go-election")
	go func() {
		for l := range leaders { // the reader may call anything here: nothing waits for it
			fmt.Println("observed:", l) // the leader's value and term; nil: no leader
		}
	}()
	leadership, err := locks.Campaign(ctx, "examples/go-election", 10*time.Second, redlock.WithValue("worker-1"))
	if err != nil {
		return err // with a deadline on ctx: errors.Is(err, redlock.ErrNotAcquired) when it passes first
	}
	fmt.Printf("leading examples/go-election: term %d\n", leadership.Term())
	select { // Done and Err as on a context
	case <-leadership.Done(): // lost: the stream ended or renewals stopped reaching a quorum in time
		return leadership.Err() // errors.Is(err, redlock.ErrLeaseLost)
	case <-time.After(time.Second): // the work: send leadership.Term() with each write, as a fencing token
	}
	if _, err := leadership.Resign(ctx); err != nil {
		return err
	}
	fmt.Println("resigned:", leadership.Err() == redlock.ErrResigned) // Done is closed by a resign too
	// --- README election example ends ---
	time.Sleep(100 * time.Millisecond) // lets the observer see that nobody leads now

	// --- README lead example begins ---
	// Campaigns, runs the work while leading, resigns when it returns.
	err = locks.Lead(ctx, "examples/go-election", 10*time.Second,
		func(ctx context.Context, l *redlock.Leadership) error {
			fmt.Printf("lead: leading examples/go-election in term %d\n", l.Term())
			select {
			case <-time.After(time.Second): // the work: send l.Term() with each write
				return nil
			case <-ctx.Done(): // cancelled the moment the leadership is lost (l.Err() says why)
				return ctx.Err()
			}
		}, redlock.WithValue("worker-2")) // add redlock.Requeue(): after a loss, campaign and run it again
	if err != nil {
		return err // errors.Is(err, redlock.ErrLeaseLost): lost before the work returned
	}
	fmt.Println("lead: done, resigned")
	// --- README lead example ends ---
	time.Sleep(100 * time.Millisecond) // lets the observer see that nobody leads now
	return nil
}
