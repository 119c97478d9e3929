// Command redlockd-example takes a lock with the Go client, keeps it alive through some work,
// releases it, then does the same with WithLock; then it campaigns in an election it observes,
// leads for a second and resigns.
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
	lease, err := locks.Acquire(ctx, "examples/go", 10*time.Second, 2*time.Second)
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
	err = locks.WithLock(ctx, "examples/go", 10*time.Second, 2*time.Second,
		func(ctx context.Context, l *redlock.Lease) error {
			fmt.Printf("with lock on examples/go: fencing token %d\n", l.FencingToken())
			return nil
		})
	if err != nil {
		return err
	}

	// --- README election example begins ---
	watch := locks.Observe(ctx, "examples/go-election", func(l *redlock.Leader) {
		fmt.Println("observed:", l) // the leader's value and term; nil: no leader
	})
	defer watch.Close() // no callback runs after Close returns
	leadership, err := locks.Campaign(ctx, "examples/go-election", "worker-1", 10*time.Second)
	if err != nil {
		return err // with a deadline on ctx: errors.Is(err, redlock.ErrNotAcquired) when it passes first
	}
	fmt.Printf("leading examples/go-election: term %d\n", leadership.Term())
	// Lost (not resigned): the stream ended or renewals stopped reaching a quorum in time.
	leadership.OnLost(func(err error) { fmt.Println("stop leading:", err) })
	time.Sleep(time.Second) // the work: send leadership.Term() with each write, as a fencing token
	if _, err := leadership.Resign(ctx); err != nil {
		return err
	}
	fmt.Println("resigned")
	// --- README election example ends ---
	time.Sleep(100 * time.Millisecond) // lets the observer see that nobody leads now
	return nil
}
