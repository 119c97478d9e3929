package dev.redlockd.server.access;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Optional;

/**
 * Lets a call reach the service only as far as the access policy allows: without an acceptable
 * identity it ends UNAUTHENTICATED before the service sees it; each request (every message of a
 * stream, since a later one may name another resource) is checked before it is handed on, and one
 * that is not granted ends the call PERMISSION_DENIED. Methods outside the {@link MethodTable}
 * (health, reflection) and every call on a server without a policy pass untouched.
 */
public final class AuthInterceptor implements ServerInterceptor {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  /**
   * The longest authorization header looked at, in characters (bytes: the header is ASCII): far
   * above any token the server makes or the docs suggest, and refused UNAUTHENTICATED like any
   * other token the file does not hold, without being hashed. The transport takes up to
   * {@link #MAX_METADATA_BYTES} of headers, so such a header reaches this check at all.
   */
  public static final int MAX_CREDENTIAL_CHARS = 4 * 1024;
  /** All of a call's headers together, what the gRPC transport accepts (grpc-java's default is 8 KiB). */
  public static final int MAX_METADATA_BYTES = 64 * 1024;

  private final Access access;

  public AuthInterceptor(Access access) {
    this.access = access;
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
      ServerCallHandler<ReqT, RespT> next) {
    Optional<MethodTable.Rule> rule = MethodTable.forMethod(call.getMethodDescriptor().getFullMethodName());
    if (access.isOpen() || rule.isEmpty()) {
      return next.startCall(call, headers);
    }
    String peer = CallerInterceptor.describe(call.getAttributes());
    String authorization = headers.get(AUTHORIZATION);
    if (authorization != null && authorization.length() > MAX_CREDENTIAL_CHARS) {
      return refuse(call, access.unauthenticated(rule.get().rpc(), peer, Access.Unidentified.OVERSIZED));
    }
    Optional<Credential> credential = CallerIdentity.credential(
        call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION), authorization);
    Optional<String> identity = credential.flatMap(access::identify);
    if (identity.isEmpty()) {
      return refuse(call, access.unauthenticated(rule.get().rpc(), peer, authorization != null
          ? Access.Unidentified.UNKNOWN_TOKEN : Access.Unidentified.NO_CREDENTIAL));
    }
    Caller caller = new Caller(identity.get(), peer, credential.get());
    Context context = caller.attachTo(Context.current());
    return new Checked<>(call, Contexts.interceptCall(context, call, headers, next), caller, rule.get());
  }

  private static <ReqT, RespT> ServerCall.Listener<ReqT> refuse(ServerCall<ReqT, RespT> call, Status status) {
    call.close(status, new Metadata());
    return new ServerCall.Listener<>() {};
  }

  /**
   * Hands each request on only once it is allowed; after a refusal, hands nothing on. The service
   * hears of a refused call's end once, by its {@code onCancel}: the ServerCall.Listener contract
   * allows one of onCancel and onComplete, so the onComplete that follows the refusal's close is
   * not passed on.
   */
  private final class Checked<ReqT, RespT> extends ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT> {
    private final ServerCall<ReqT, RespT> call;
    private final Caller caller;
    private final MethodTable.Rule rule;
    private String firstResource; // a stream's later requests may leave the resource out
    private boolean refused;

    Checked(ServerCall<ReqT, RespT> call, ServerCall.Listener<ReqT> delegate, Caller caller, MethodTable.Rule rule) {
      super(delegate);
      this.call = call;
      this.caller = caller;
      this.rule = rule;
    }

    @Override
    public void onMessage(ReqT message) {
      if (refused) {
        return;
      }
      String resource = rule.resource().apply(message);
      if (firstResource == null) {
        firstResource = resource;
      } else if (resource.isEmpty()) {
        resource = firstResource;
      }
      Status denied = access.check(caller, rule.rpc(), rule.permission(), resource);
      if (denied == null) {
        super.onMessage(message);
        return;
      }
      refused = true;
      // The service may have opened a stream for this call already: it hears first that the call
      // is over, as if the client had gone, so that it gives back what it took and sends nothing
      // more on a closed call.
      super.onCancel();
      call.close(denied, new Metadata());
    }

    @Override
    public void onHalfClose() {
      if (!refused) {
        super.onHalfClose();
      }
    }

    @Override
    public void onCancel() {
      if (!refused) {
        super.onCancel();
      }
    }

    @Override
    public void onComplete() {
      if (!refused) {
        super.onComplete();
      }
    }

    @Override
    public void onReady() {
      if (!refused) {
        super.onReady();
      }
    }
  }
}
