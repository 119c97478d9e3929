// Package redlock is the Go client of redlockd, a gRPC lock service that runs the Redlock
// algorithm over N independent Redis nodes and hands out leases with fencing tokens.
//
//	c := redlock.New(conn) // conn is a *grpc.ClientConn the caller dials and closes
//	l, err := c.Acquire(ctx, "orders/42", 10*time.Second, redlock.WithWait(2*time.Second))
//	if errors.Is(err, redlock.ErrNotAcquired) { ... } // someone else holds it
//	defer l.Release(context.Background())
//	store.Write(order, l.FencingToken())
//
// The client makes each lease's token itself (24 bytes from crypto/rand), so an Acquire retried
// after UNAVAILABLE or DEADLINE_EXCEEDED carries the same token and the server refreshes the
// lease it may already have granted instead of granting a second one. The token never leaves
// the Lease: no error message, String form or log line contains it.
//
// A Lease knows its deadline on the monotonic clock (the time its request was sent plus the
// validity the server returned) and counts as valid while now < deadline - guard, guard =
// min(ttl/20, 100ms), so that a loss is reported before the deadline itself passes. KeepAlive
// binds the lease to a server stream that renews it; Done, OnLost and WithLock's context report
// its loss.
//
// A kept stream that ends because its replica shut down or its connection broke is not a loss:
// it is reopened with the same token (a leader's Campaign with resume) until the guarded
// deadline passes, and the lease keeps its fencing token, the leadership its term. Dial gives
// the client every replica (round_robin), so that the new stream reaches a live one. Extend on
// a kept lease goes through its stream.
//
// Elections use the same machinery: Campaign waits until this client leads an election and
// returns a Leadership kept alive on its Campaign stream (IsLeader with the same guard, OnLost,
// Proclaim, Resign, and Done / Err / Deadline as on a context); its Term is the lease's fencing
// token. Lead runs a function while this client leads, with a context cancelled the moment the
// leadership is lost (and with Requeue campaigns again). Leader reads who leads; Observe sends
// every change on a channel closed when its context ends (ObserveFunc: a callback on it).
//
// Every error that comes from a call keeps its gRPC status: status.Code(err) works on it
// directly (it implements GRPCStatus), and errors.Is(err, ErrNotAcquired) / ErrLeaseLost tell
// the two outcomes callers usually branch on.
package redlock
