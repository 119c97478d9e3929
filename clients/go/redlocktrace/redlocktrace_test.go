package redlocktrace_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"redlockd.dev/go/redlock"
	"redlockd.dev/go/redlocktrace"
	pb "redlockd.dev/go/redlockv1"
)

// codec is the server's APIv2 codec: Debian's grpc 1.33 sits on golang/protobuf 1.3, whose
// default codec panics on the generated messages (see redlock's codec.go for the client's).
type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }
func (codec) Unmarshal(data []byte, v interface{}) error {
	return proto.Unmarshal(data, v.(proto.Message))
}
func (codec) String() string { return "proto" }

// recording grants every Acquire and Release and keeps each call's traceparent.
type recording struct {
	pb.UnimplementedLockServiceServer
	mu   sync.Mutex
	seen []string
}

func (r *recording) record(ctx context.Context, resource string) {
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, resource+": "+stringsOf(md.Get("traceparent")))
}

func stringsOf(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	if len(v) > 1 {
		return "several"
	}
	return v[0]
}

func (r *recording) Acquire(ctx context.Context, req *pb.AcquireRequest) (*pb.AcquireResponse, error) {
	r.record(ctx, req.Resource)
	return &pb.AcquireResponse{Lease: &pb.Lease{Resource: req.Resource, Token: req.Token,
		Validity: req.Ttl, FencingToken: 7}}, nil
}

func (r *recording) Release(ctx context.Context, req *pb.ReleaseRequest) (*pb.ReleaseResponse, error) {
	r.record(ctx, req.Resource)
	return &pb.ReleaseResponse{Released: true}, nil
}

func TestEachCallCarriesTheCallersTraceContext(t *testing.T) {
	listener := bufconn.Listen(1 << 20)
	server := grpc.NewServer(grpc.CustomCodec(codec{}))
	rec := &recording{}
	pb.RegisterLockServiceServer(server, rec)
	go server.Serve(listener)
	defer server.Stop()
	w3c := redlocktrace.WithPropagator(propagation.TraceContext{})
	conn, err := grpc.Dial("bufnet", grpc.WithInsecure(),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return listener.Dial() }),
		grpc.WithChainUnaryInterceptor(redlocktrace.UnaryClientInterceptor(w3c)),
		grpc.WithChainStreamInterceptor(redlocktrace.StreamClientInterceptor(w3c)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := redlock.New(conn)

	traceID, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	spanID, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	caller := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}))
	lease, err := client.Acquire(caller, "traced", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lease.Release(caller); err != nil {
		t.Fatal(err)
	}
	plain, err := client.Acquire(context.Background(), "untraced", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	rec.mu.Lock()
	defer rec.mu.Unlock()
	traced, untraced := 0, 0
	for _, call := range rec.seen {
		switch call {
		case "traced: " + want:
			traced++
		case "untraced: none":
			untraced++
		default:
			t.Errorf("call with the wrong trace context: %q", call)
		}
	}
	// Each an Acquire and a Release at least.
	if traced < 2 || untraced < 2 {
		t.Fatalf("calls seen: %q", rec.seen)
	}
}
