package redlock

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// protoCodec marshals with google.golang.org/protobuf (APIv2), which the generated redlockv1
// messages are made for. grpc-go's default "proto" codec goes through github.com/golang/protobuf:
// with v1.4+ that is the same thing, but Debian pairs grpc 1.33 with golang/protobuf 1.3
// (golang-github-golang-protobuf-1-3-dev), whose codec panics on APIv2 messages. Forcing this
// codec on the client's calls makes the client work with either. Its name is "proto", so the
// wire format and content type (application/grpc+proto) are the standard ones.
type protoCodec struct{}

func (protoCodec) Marshal(v interface{}) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("redlock: cannot marshal %T: not a proto.Message", v)
	}
	return proto.Marshal(m)
}

func (protoCodec) Unmarshal(data []byte, v interface{}) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("redlock: cannot unmarshal into %T: not a proto.Message", v)
	}
	return proto.Unmarshal(data, m)
}

// Name is the content subtype (encoding.Codec).
func (protoCodec) Name() string { return "proto" }

// String is Name for the older grpc.Codec interface (grpc.CustomCodec on a server).
func (protoCodec) String() string { return "proto" }

// codecConn adds the codec to every call made through it, and notes the server's pushback
// (pushback.go) on the errors of its calls.
type codecConn struct{ cc grpc.ClientConnInterface }

func (c codecConn) Invoke(ctx context.Context, method string, args, reply interface{}, opts ...grpc.CallOption) error {
	return invokeNoting(ctx, c.cc, method, args, reply, append(opts, grpc.ForceCodec(protoCodec{}))...)
}

func (c codecConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := c.cc.NewStream(ctx, desc, method, append(opts, grpc.ForceCodec(protoCodec{}))...)
	if err != nil {
		return nil, err
	}
	return notingStream{s}, nil
}
