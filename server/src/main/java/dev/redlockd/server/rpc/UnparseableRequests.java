package dev.redlockd.server.rpc;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a call whose request bytes do not parse with a clear status (INVALID_ARGUMENT, with the
 * parser's reason), before the service sees anything, and without a stack trace in the log.
 *
 * <p>grpc-java parses requests with the method's marshaller inside the call's executor; a
 * parse exception escapes it, the call is closed UNKNOWN "Application error processing RPC",
 * and the executor logs the exception at SEVERE through java.util.logging (past logback), once
 * per call: any client could fill the log with them. So each method here gets a
 * {@link TolerantMarshaller} that hands the failure over as a value, and a listener that turns
 * that value into the call's status.
 *
 * <p>The service descriptor and every method descriptor keep their schema descriptors, which
 * server reflection (grpcurl list/describe) reads.
 */
public final class UnparseableRequests {
  private static final Logger log = LoggerFactory.getLogger(UnparseableRequests.class);

  private UnparseableRequests() {}

  /** The same service, with unparseable requests refused instead of thrown. */
  public static ServerServiceDefinition refuse(ServerServiceDefinition service) {
    ServiceDescriptor original = service.getServiceDescriptor();
    List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
    for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
      methods.add(tolerant(method));
    }
    ServiceDescriptor.Builder descriptor = ServiceDescriptor.newBuilder(original.getName())
        .setSchemaDescriptor(original.getSchemaDescriptor());
    // The builder checks that each bound method is the very descriptor the service names.
    methods.forEach(m -> descriptor.addMethod(m.getMethodDescriptor()));
    ServerServiceDefinition.Builder refusing = ServerServiceDefinition.builder(descriptor.build());
    methods.forEach(refusing::addMethod);
    return refusing.build();
  }

  private static <ReqT, RespT> ServerMethodDefinition<Object, RespT> tolerant(ServerMethodDefinition<ReqT, RespT> method) {
    MethodDescriptor<ReqT, RespT> typed = method.getMethodDescriptor();
    MethodDescriptor<Object, RespT> tolerant = typed.toBuilder(
            new TolerantMarshaller<>(typed.getRequestMarshaller(), typed.getFullMethodName()),
            typed.getResponseMarshaller())
        .build();
    return ServerMethodDefinition.create(tolerant, new Handler<>(typed, method.getServerCallHandler()));
  }

  private static final class Handler<ReqT, RespT> implements ServerCallHandler<Object, RespT> {
    private final MethodDescriptor<ReqT, RespT> typed;
    private final ServerCallHandler<ReqT, RespT> service;

    Handler(MethodDescriptor<ReqT, RespT> typed, ServerCallHandler<ReqT, RespT> service) {
      this.typed = typed;
      this.service = service;
    }

    @Override
    public ServerCall.Listener<Object> startCall(ServerCall<Object, RespT> call, Metadata headers) {
      RefusableCall<ReqT, RespT> refusable = new RefusableCall<>(call, typed);
      return new Listener<>(refusable, service.startCall(refusable, headers));
    }
  }

  /**
   * The call as the service sees it: typed as its own method again, and, once a request was
   * refused, already over. From then on it reads as cancelled and ignores what the service
   * still sends: a KeepAlive renewal may be on its way from an engine thread.
   */
  private static final class RefusableCall<ReqT, RespT> extends ForwardingServerCall<ReqT, RespT> {
    private final ServerCall<Object, RespT> call;
    private final MethodDescriptor<ReqT, RespT> typed;
    private volatile boolean refused;

    RefusableCall(ServerCall<Object, RespT> call, MethodDescriptor<ReqT, RespT> typed) {
      this.call = call;
      this.typed = typed;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected ServerCall<ReqT, RespT> delegate() {
      // The request type shows only in getMethodDescriptor, overridden below; every other
      // method is the same whatever the request type is.
      return (ServerCall<ReqT, RespT>) (ServerCall<?, RespT>) call;
    }

    @Override
    public MethodDescriptor<ReqT, RespT> getMethodDescriptor() {
      return typed;
    }

    @Override
    public boolean isCancelled() {
      return refused || super.isCancelled();
    }

    @Override
    public boolean isReady() {
      return !refused && super.isReady();
    }

    @Override
    public void sendHeaders(Metadata headers) {
      if (!refused) {
        super.sendHeaders(headers);
      }
    }

    @Override
    public void sendMessage(RespT message) {
      if (!refused) {
        super.sendMessage(message);
      }
    }

    @Override
    public void close(Status status, Metadata trailers) {
      if (!refused) {
        super.close(status, trailers);
      }
    }

    @Override
    public void request(int numMessages) {
      if (!refused) {
        super.request(numMessages);
      }
    }

    public void refuse(Status status) {
      refused = true;
      call.close(status, new Metadata());
    }
  }

  /**
   * Passes parsed requests on; on the first unparseable one, tells the service its call was
   * cancelled (for KeepAlive: the lease is let go as when the client cancels, so the stream
   * is deregistered and renews nothing) and only then closes the call, so that nothing the
   * service sends while it lets go meets a closed call. Everything after that is dropped.
   * gRPC delivers listener callbacks one at a time, so {@code refused} needs no lock here.
   */
  private static final class Listener<ReqT, RespT> extends ServerCall.Listener<Object> {
    private final RefusableCall<ReqT, RespT> call;
    private final ServerCall.Listener<ReqT> service;
    private boolean refused;

    Listener(RefusableCall<ReqT, RespT> call, ServerCall.Listener<ReqT> service) {
      this.call = call;
      this.service = service;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void onMessage(Object message) {
      if (refused) {
        return;
      }
      if (message instanceof TolerantMarshaller.Unparseable unparseable) {
        refused = true;
        Status status = unparseable.status();
        // Debug only: one line per bad request would still let any client fill an INFO log.
        log.debug("refused a request to {}: {} {}", call.getMethodDescriptor().getFullMethodName(),
            status.getCode(), status.getDescription());
        try {
          service.onCancel();
        } finally {
          call.refuse(status);
        }
        return;
      }
      service.onMessage((ReqT) message);
    }

    @Override
    public void onHalfClose() {
      if (!refused) {
        service.onHalfClose();
      }
    }

    @Override
    public void onCancel() {
      if (!refused) {
        service.onCancel();
      }
    }

    @Override
    public void onComplete() {
      if (!refused) {
        service.onComplete();
      }
    }

    @Override
    public void onReady() {
      if (!refused) {
        service.onReady();
      }
    }
  }
}
