package redlock

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrNotAcquired: the lock is held by someone else and was not acquired within the wait (the
// server answered ABORTED). Test with errors.Is.
var ErrNotAcquired = errors.New("redlock: lock not acquired")

// ErrLeaseLost: the lease (or a Leadership) can no longer be relied on (it expired, was taken
// over, or its renewals could not reach a quorum before its validity ran out). Stop touching
// the protected resource. Test with errors.Is.
var ErrLeaseLost = errors.New("redlock: lease lost")

// Error is a failed lock operation. It carries the gRPC status of the failure, which
// status.Code and status.FromError find directly: grpc-go before 1.41 looks for GRPCStatus
// with a plain type assertion, not errors.As, so the returned error itself has to have it.
// The message names the operation and the resource, never the token.
type Error struct {
	// Op is the operation that failed: "acquire", "extend", "release", "keep-alive", "lease";
	// for elections "campaign", "leadership" (a loss), "proclaim", "resign", "leader".
	Op string
	// Resource is the name of the lock, or of the election.
	Resource string

	st       *status.Status
	kind     error // ErrNotAcquired, ErrLeaseLost or nil
	cause    error // what the failure came from (a gRPC error, a context error) or nil
	election bool  // about a leadership: its loss reads "leadership lost"
}

// Error names the operation, the resource and the status.
func (e *Error) Error() string {
	what := ""
	if e.kind == ErrLeaseLost {
		what = "lease lost: "
		if e.election {
			what = "leadership lost: "
		}
	}
	return fmt.Sprintf("redlock: %s %q: %s%s: %s", e.Op, e.Resource, what, e.st.Code(), e.st.Message())
}

// GRPCStatus is the status of the failure, for status.Code and status.FromError.
func (e *Error) GRPCStatus() *status.Status { return e.st }

// Code is the gRPC code of the failure.
func (e *Error) Code() codes.Code { return e.st.Code() }

// Unwrap gives the error this one came from (the gRPC error, or context.Canceled /
// context.DeadlineExceeded when the caller's context ended the operation).
func (e *Error) Unwrap() error { return e.cause }

// Is makes errors.Is(err, ErrNotAcquired) and errors.Is(err, ErrLeaseLost) work.
func (e *Error) Is(target error) bool { return e.kind != nil && target == e.kind }

// callError wraps the failure of a call; ABORTED is the "not acquired" answer.
func callError(op, resource string, err error) *Error {
	var st *status.Status
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		st = status.FromContextError(err)
	default:
		st = status.Convert(err)
	}
	e := &Error{Op: op, Resource: resource, st: st, cause: err}
	if st.Code() == codes.Aborted {
		e.kind = ErrNotAcquired
	}
	return e
}

// abandonedError is the failure of an operation the caller's context ended (ctxErr), with the
// status of the call it ended when there is one, so that errors.Is(err, context.Canceled)
// holds as well as status.Code(err) == codes.Canceled.
func abandonedError(op, resource string, ctxErr, callErr error) *Error {
	st := status.FromContextError(ctxErr)
	if s, ok := status.FromError(callErr); ok && callErr != nil && s.Code() == st.Code() {
		st = s
	}
	return &Error{Op: op, Resource: resource, st: st, cause: ctxErr}
}

// lostError is the error a lost lease reports.
func lostError(op, resource string, st *status.Status, cause error) *Error {
	return &Error{Op: op, Resource: resource, st: st, kind: ErrLeaseLost, cause: cause}
}
