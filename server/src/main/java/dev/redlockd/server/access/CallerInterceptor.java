package dev.redlockd.server.access;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.SocketAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Set;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Makes the transport attributes of the calls to the given methods readable by the service (a
 * stub-based service never sees its {@link ServerCall}), so that audit lines can say who made a
 * call: {@link #current()}. Other methods pass through untouched, at no cost.
 */
public final class CallerInterceptor implements ServerInterceptor {
  private static final Context.Key<Attributes> ATTRIBUTES = Context.key("redlockd-caller-attributes");

  private final Set<String> methods;

  /** For the methods with these full names ({@code package.Service/Method}). */
  public CallerInterceptor(Set<String> methods) {
    this.methods = Set.copyOf(methods);
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
      ServerCallHandler<ReqT, RespT> next) {
    if (!methods.contains(call.getMethodDescriptor().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    Context context = Context.current().withValue(ATTRIBUTES, call.getAttributes());
    return Contexts.interceptCall(context, call, headers, next);
  }

  /**
   * The current call's peer address, and the subject of its client certificate when it came
   * over mutual TLS: {@code /10.0.0.7:53412} or {@code /10.0.0.7:53412 (TLS subject CN=ops-1)}.
   */
  public static String current() {
    return describe(ATTRIBUTES.get());
  }

  static String describe(Attributes attributes) {
    if (attributes == null) {
      return "an unknown peer";
    }
    SocketAddress remote = attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    String peer = remote == null ? "an unknown peer" : remote.toString();
    String subject = tlsSubject(attributes.get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
    return subject == null ? peer : peer + " (TLS subject " + subject + ")";
  }

  /** The client certificate's subject, or null without TLS or without a client certificate. */
  private static String tlsSubject(SSLSession session) {
    if (session == null) {
      return null;
    }
    try {
      Certificate[] chain = session.getPeerCertificates();
      if (chain.length > 0 && chain[0] instanceof X509Certificate leaf) {
        return leaf.getSubjectX500Principal().getName();
      }
      return null;
    } catch (SSLPeerUnverifiedException e) {
      return null; // TLS without a client certificate
    }
  }
}
