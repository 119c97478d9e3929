package dev.redlockd.server.access;

import dev.redlockd.server.metrics.Metrics;
import io.grpc.Status;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
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

  /** Why a call has no identity. */
  enum Unidentified {
    NO_CREDENTIAL("no client certificate, no bearer token"),
    UNKNOWN_TOKEN("the bearer token is not in the token file"),
    OVERSIZED("the authorization header is longer than " + AuthInterceptor.MAX_CREDENTIAL_CHARS + " characters");

    final String reason;

    Unidentified(String reason) {
      this.reason = reason;
    }
  }

  private final AccessControl control; // null: no policy, every call allowed
  private final Metrics metrics;
  /** Open streams that renew nothing (Observe): checked again whenever the rules are reloaded. */
  private final Set<Watch> watches = ConcurrentHashMap.newKeySet();

  public Access(AccessControl control, Metrics metrics) {
    this.control = control;
    this.metrics = metrics;
    if (control != null) {
      control.onReload(this::recheckWatches);
    }
  }

  public static Access open() {
    return new Access(null, Metrics.off());
  }

  boolean isOpen() {
    return control == null;
  }

  /** The identity the credential names under the rules in force. */
  Optional<String> identify(Credential credential) {
    return credential.identify(control.current().tokens());
  }

  /** The identity's limits under the rules in force; generous defaults when no entry sets them. */
  Limits limitsFor(String identity) {
    return control.current().policy().limitsFor(identity);
  }

  /** A call that named no acceptable identity: logged, and the status it ends with. */
  Status unauthenticated(String rpc, String peer, Unidentified why) {
    audit.warn("denied {} from {}: no identity ({})", rpc, peer, why.reason);
    metrics.denied(NO_IDENTITY, rpc);
    return switch (why) {
      case NO_CREDENTIAL -> Refusals.unauthenticated(false);
      case UNKNOWN_TOKEN -> Refusals.unauthenticated(true);
      case OVERSIZED -> Refusals.oversizedCredential(AuthInterceptor.MAX_CREDENTIAL_CHARS);
    };
  }

  /**
   * Null if the caller may use the permission on the resource under the rules in force now;
   * otherwise the refusal, logged. The caller's identity is found again first, from the credential
   * it presented: UNAUTHENTICATED when its token has left the token file (or now names someone
   * else), PERMISSION_DENIED when the policy no longer grants its identity the resource.
   */
  public Status check(Caller caller, String rpc, Permission permission, String resource) {
    if (caller == null || control == null) {
      return null;
    }
    AccessRules rules = control.current();
    String identity = Printable.of(caller.identity());
    String printableResource = Printable.of(resource);
    Optional<String> now = caller.credential().identify(rules.tokens());
    if (now.isEmpty() || !now.get().equals(caller.identity())) {
      audit.warn("denied {} of resource '{}' to identity '{}' from {}: its bearer token is no longer in the token "
          + "file", rpc, printableResource, identity, caller.peer());
      metrics.denied(caller.identity(), rpc);
      return Refusals.credentialRevoked(identity, rpc, printableResource);
    }
    if (rules.policy().allows(caller.identity(), permission, resource)) {
      return null;
    }
    audit.warn("denied {} of resource '{}' to identity '{}' from {}: no {} grant covers it", rpc, printableResource,
        identity, caller.peer(), permission.key());
    metrics.denied(caller.identity(), rpc);
    return Refusals.permissionDenied(identity, rpc, printableResource, permission.key());
  }

  /**
   * For a stream that sends no more requests and renews nothing (Observe): each time the rules are
   * reloaded it is checked again as {@link #check} would, and a refusal is handed to
   * {@code refused} (once). Closing the returned handle, when the stream ends, stops the checks.
   */
  public Quotas.Slot watch(Caller caller, String rpc, Permission permission, String resource,
      Consumer<Status> refused) {
    if (caller == null || control == null) {
      return () -> { };
    }
    Watch watch = new Watch(caller, rpc, permission, resource, refused);
    watches.add(watch);
    return () -> watches.remove(watch);
  }

  private void recheckWatches() {
    for (Watch watch : watches) {
      Status status = check(watch.caller, watch.rpc, watch.permission, watch.resource);
      if (status != null && watch.told.compareAndSet(false, true)) {
        watches.remove(watch);
        watch.refused.accept(status);
      }
    }
  }

  private static final class Watch {
    final Caller caller;
    final String rpc;
    final Permission permission;
    final String resource;
    final Consumer<Status> refused;
    final AtomicBoolean told = new AtomicBoolean();

    Watch(Caller caller, String rpc, Permission permission, String resource, Consumer<Status> refused) {
      this.caller = caller;
      this.rpc = rpc;
      this.permission = permission;
      this.resource = resource;
      this.refused = refused;
    }
  }
}
