package dev.redlockd.server.access;

import dev.redlockd.server.metrics.Metrics;
import io.grpc.Status;
import java.util.Optional;
import javax.net.ssl.SSLSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's access decisions: who a call comes from, and whether the rules in force let it
 * use a resource. Every refusal goes through here, so each one is logged the same way: one line
 * with the identity, the peer, the RPC and the resource (never a token).
 */
public final class Access {
  private static final Logger audit = LoggerFactory.getLogger("dev.redlockd.audit");

  /** The identity label of calls refused for having none. */
  static final String NO_IDENTITY = "(none)";

  private final AccessControl control; // null: no policy, every call allowed
  private final Metrics metrics;

  public Access(AccessControl control, Metrics metrics) {
    this.control = control;
    this.metrics = metrics;
  }

  public static Access open() {
    return new Access(null, Metrics.off());
  }

  boolean isOpen() {
    return control == null;
  }

  /** The caller's identity from its certificate or its bearer token, under the rules in force. */
  Optional<String> identify(SSLSession session, String authorization) {
    return CallerIdentity.of(session, authorization, control.current().tokens());
  }

  /** The identity's limits under the rules in force; generous defaults when no entry sets them. */
  Limits limitsFor(String identity) {
    return control.current().policy().limitsFor(identity);
  }

  /** A call that named no acceptable identity: logged, and the status it ends with. */
  Status unauthenticated(String rpc, String peer, boolean presentedToken) {
    audit.warn("denied {} from {}: no identity ({})", rpc, peer,
        presentedToken ? "the bearer token is not in the token file" : "no client certificate, no bearer token");
    metrics.denied(NO_IDENTITY, rpc);
    return Refusals.unauthenticated(presentedToken);
  }

  /**
   * Null if the caller may use the permission on the resource under the rules in force now;
   * otherwise the refusal, logged.
   */
  public Status check(Caller caller, String rpc, Permission permission, String resource) {
    if (caller == null || control == null) {
      return null;
    }
    AccessRules rules = control.current();
    if (rules.policy().allows(caller.identity(), permission, resource)) {
      return null;
    }
    String identity = Printable.of(caller.identity());
    String printableResource = Printable.of(resource);
    audit.warn("denied {} of resource '{}' to identity '{}' from {}: no {} grant covers it", rpc, printableResource,
        identity, caller.peer(), permission.key());
    metrics.denied(caller.identity(), rpc);
    return Refusals.permissionDenied(identity, rpc, printableResource, permission.key());
  }
}
