package dev.redlockd.server.access;

import io.grpc.Status;

/** The statuses a call gets when access control refuses it. */
public final class Refusals {

  private Refusals() {
  }

  /** A call without an acceptable identity on a server with an access policy. */
  public static Status unauthenticated(boolean presentedToken) {
    return Status.UNAUTHENTICATED.withDescription(presentedToken
        ? "the bearer token presented is not known to this server"
        : "this server's access policy needs a client certificate or an 'authorization: Bearer' header with a "
            + "known token");
  }

  /** A credential longer than the server takes: refused before any token comparison. */
  public static Status oversizedCredential(int maxChars) {
    return Status.UNAUTHENTICATED.withDescription("the authorization header is longer than the " + maxChars
        + " characters this server takes for a credential");
  }

  /**
   * A call under way whose bearer token was taken out of the token file (a reload): it no longer
   * names its identity. The names are already made printable.
   */
  public static Status credentialRevoked(String identity, String rpc, String resource) {
    return Status.UNAUTHENTICATED.withDescription("identity '" + identity + "' may no longer " + rpc + " resource '"
        + resource + "': the bearer token this call presented is no longer known to this server");
  }

  /** A call the access policy does not grant; the names are already made printable. */
  public static Status permissionDenied(String identity, String rpc, String resource, String permission) {
    return Status.PERMISSION_DENIED.withDescription("identity '" + identity + "' may not " + rpc + " resource '"
        + resource + "': the access policy grants it no " + permission + " prefix covering it");
  }
}
