package dev.redlockd.it.fuzz;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.EnumSet;
import java.util.Set;

/**
 * The RPCs of the contract as byte-level methods: the client sends whatever bytes it is
 * given, as a buggy or hostile client in any language could, and reads the answer as bytes.
 */
enum Rpc {
  ACQUIRE(LockServiceGrpc.getAcquireMethod(), AcquireRequest.parser()),
  EXTEND(LockServiceGrpc.getExtendMethod(), ExtendRequest.parser()),
  RELEASE(LockServiceGrpc.getReleaseMethod(), ReleaseRequest.parser()),
  KEEP_ALIVE(LockServiceGrpc.getKeepAliveMethod(), KeepAliveRequest.parser()),
  DESCRIBE(LockServiceGrpc.getDescribeMethod(), DescribeRequest.parser()),
  /** Also PERMISSION_DENIED: refused unless the server runs with --allow-force-release. */
  FORCE_RELEASE(LockServiceGrpc.getForceReleaseMethod(), ForceReleaseRequest.parser(), Status.Code.PERMISSION_DENIED);

  final MethodDescriptor<byte[], byte[]> method;
  private final Parser<?> parser;
  private final Set<Status.Code> allowed;

  Rpc(MethodDescriptor<?, ?> typed, Parser<?> parser, Status.Code... alsoAllowed) {
    Set<Status.Code> codes = EnumSet.copyOf(ServerChecks.CONTRACT);
    codes.addAll(java.util.Arrays.asList(alsoAllowed));
    this.allowed = codes;
    this.method = MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(typed.getType())
        .setFullMethodName(typed.getFullMethodName())
        .setRequestMarshaller(Bytes.MARSHALLER)
        .setResponseMarshaller(Bytes.MARSHALLER)
        .build();
    this.parser = parser;
  }

  /** The codes a call of this RPC may end with: the contract's, and this RPC's own. */
  Set<Status.Code> allowed() {
    return allowed;
  }

  boolean streaming() {
    return method.getType() == MethodDescriptor.MethodType.BIDI_STREAMING;
  }

  /** Whether these bytes are a request of this RPC at all (what the server's own parser decides first). */
  boolean parses(byte[] bytes) {
    try {
      parser.parseFrom(bytes);
      return true;
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
  }

  /** Bytes in, bytes out (a nested class: enum constants cannot use the enum's own static fields). */
  private static final class Bytes {
    static final MethodDescriptor.Marshaller<byte[]> MARSHALLER = new MethodDescriptor.Marshaller<>() {
      @Override
      public InputStream stream(byte[] value) {
        return new ByteArrayInputStream(value);
      }

      @Override
      public byte[] parse(InputStream stream) {
        try {
          return stream.readAllBytes();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    };
  }
}
