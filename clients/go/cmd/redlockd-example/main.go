// Command redlockd-example takes a lock with the Go client, keeps it alive through some work,
// releases it, then does the same with WithLock.
//
//	redlockd-example --server 127.0.0.1:50051
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"

	"redlockd.dev/go/redlock"
)

func main() {
	server := flag.String("server", "127.0.0.1:50051", "redlockd address, HOST:PORT")
	flag.Parse()
	if err := run(*server); err != nil {
		fmt.Fprintln(os.Stderr, "redlockd-example:", err)
		os.Exit(1)
	}
}

func run(server string) error {
	conn, err := grpc.Dial(server, grpc.WithInsecure()) // plaintext, as a dev server listens
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
	return locks.WithLock(ctx, "examples/go", 10*time.Second, 2*time.Second,
		func(ctx context.Context, l *redlock.Lease) error {
			fmt.Printf("with lock on examples/go: fencing token %d\n", l.FencingToken())
			return nil
		})
}
