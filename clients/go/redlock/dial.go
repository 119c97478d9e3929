package redlock

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
)

// roundRobin spreads calls over every address the resolver gives, so that a stream reopened
// after its replica shut down reaches one that is up.
const roundRobin = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// reconnecting tries a replica that is down every 100 ms or so (gRPC's default backoff grows to 2
// minutes), so that it is connected as soon as it serves again: round_robin only picks a connected
// replica, and the streams that move when the next replica of a rolling restart stops must find the
// one restarted just before among them, not pile onto the others (issue 40). Resetting the backoff
// when a stream needs a new home (ResetConnectBackoff) starts a connection only then, too late for
// that stream.
var reconnecting = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 100 * time.Millisecond},
	MinConnectTimeout: 5 * time.Second,
}

// pinging closes a connection to a replica that stopped answering without closing it (its host
// froze, powered off, or was cut off), so that calls fail over: a ping after KeepaliveTime without
// a read while calls are open, the connection closed when it is not answered within a second.
// grpc-go pings at most every 10 s, whatever is asked; a kept stream does not wait for that: it is
// superseded when it stays silent for a quarter of its ttl. An unanswered ping closes the
// connection (http2Client.Close) without ending any stream with END_STREAM, so a replica that was
// only paused reads a cancel when it wakes and releases nothing. The server permits client pings
// every second (its --permit-keepalive-time).
var pinging = keepalive.ClientParameters{Time: KeepaliveTime, Timeout: time.Second, PermitWithoutStream: false}

// KeepaliveTime is how long a connection with calls open may stay quiet before Dial's connections
// ping it: grpc-go's floor.
const KeepaliveTime = 10 * time.Second

// staticScheme names the resolver Dial gives a list of addresses to; it is registered with each
// connection only (grpc.WithResolvers), never globally.
const staticScheme = "redlock-static"

// Dial connects to redlockd through several replicas: addrs lists them as "host:port" (one is
// fine too), or is a single gRPC target with a scheme that resolves to several (for example
// "dns:///redlockd.internal:50051"). Calls and streams are spread over the addresses with
// gRPC's round_robin balancer, so that a kept stream whose replica shut down is reopened on
// another one, and connections are pinged while calls are open (see KeepaliveTime). opts come
// after the client's own (round_robin, reconnect backoff, keepalive), so they may replace them; pass
// the credentials here (grpc.WithInsecure() for a plaintext dev server, or TLS credentials:
// each address is verified under its own host name). The caller closes the connection.
func Dial(ctx context.Context, addrs []string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if len(addrs) == 0 {
		return nil, errors.New("redlock: Dial needs at least one server address")
	}
	all := append([]grpc.DialOption{grpc.WithDefaultServiceConfig(roundRobin), grpc.WithConnectParams(reconnecting),
		grpc.WithKeepaliveParams(pinging)}, opts...)
	if len(addrs) == 1 && strings.Contains(addrs[0], ":///") {
		return grpc.DialContext(ctx, addrs[0], all...)
	}
	state := resolver.State{}
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, errors.New("redlock: Dial was given an empty server address")
		}
		host := a
		if h, _, err := net.SplitHostPort(a); err == nil {
			host = h
		}
		state.Addresses = append(state.Addresses, resolver.Address{Addr: a, ServerName: host})
	}
	all = append(all, grpc.WithResolvers(staticResolver{state}))
	return grpc.DialContext(ctx, staticScheme+":///"+strings.TrimSpace(addrs[0]), all...)
}

// staticResolver hands a fixed list of addresses to the connection, once.
type staticResolver struct{ state resolver.State }

func (r staticResolver) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	cc.UpdateState(r.state)
	return r, nil
}

func (staticResolver) Scheme() string                        { return staticScheme }
func (staticResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (staticResolver) Close()                                {}
