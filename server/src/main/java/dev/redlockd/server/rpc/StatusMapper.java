package dev.redlockd.server.rpc;

import dev.redlockd.engine.CallerDeadlineException;
import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.engine.LockHeldException;
import dev.redlockd.engine.QuorumUnavailableException;
import dev.redlockd.engine.SemaphoreMismatchException;
import dev.redlockd.server.access.Quotas;
import io.grpc.Status;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one place where outcomes (the engine's, and the server's own refusals) become gRPC statuses. */
public final class StatusMapper {
  private static final Logger log = LoggerFactory.getLogger(StatusMapper.class);

  private StatusMapper() {}

  static Status toStatus(Throwable failure) {
    Throwable cause = unwrap(failure);
    if (cause instanceof InvalidRequestException) {
      return Status.INVALID_ARGUMENT.withDescription(cause.getMessage());
    }
    if (cause instanceof SemaphoreMismatchException) {
      // The caller's N is not the semaphore's: retrying the same call cannot succeed.
      return Status.FAILED_PRECONDITION.withDescription(cause.getMessage());
    }
    if (cause instanceof LockHeldException) {
      return Status.ABORTED.withDescription(cause.getMessage());
    }
    if (cause instanceof LeaseNotHeldException) {
      return Status.NOT_FOUND.withDescription(cause.getMessage());
    }
    if (cause instanceof QuorumUnavailableException) {
      return Status.UNAVAILABLE.withDescription(cause.getMessage());
    }
    if (cause instanceof LimitExceededException) {
      return Status.RESOURCE_EXHAUSTED.withDescription(cause.getMessage());
    }
    if (cause instanceof Quotas.Exhausted) {
      // The message names the identity and its limit: which tenant is past its share, and of what.
      return Status.RESOURCE_EXHAUSTED.withDescription(cause.getMessage());
    }
    if (cause instanceof CallerDeadlineException) {
      return Status.DEADLINE_EXCEEDED.withDescription(cause.getMessage());
    }
    if (cause instanceof CancellationException) {
      return Status.CANCELLED.withDescription("the call was cancelled");
    }
    log.error("unexpected failure", cause);
    return Status.INTERNAL.withDescription("internal error: " + cause.getClass().getSimpleName());
  }

  /** ForceRelease on a server started without --allow-force-release. */
  static Status forceReleaseDisabled() {
    return Status.PERMISSION_DENIED
        .withDescription("ForceRelease is disabled on this server (it runs without --allow-force-release)");
  }


  /** What a KeepAlive stream ends with when the server stops under it (its lease released). */
  static Status shuttingDown() {
    return Status.UNAVAILABLE.withDescription("redlockd is shutting down; nothing was released: "
        + "reopen the stream on another replica to keep the lease or leadership");
  }

  /** A request whose bytes are not the message its RPC takes. */
  static Status unparseable(String messageName, String reason) {
    return Status.INVALID_ARGUMENT.withDescription(reason == null
        ? "request could not be read as a " + messageName
        : "request is not a valid " + messageName + ": " + reason);
  }

  static Throwable unwrap(Throwable t) {
    Throwable cause = t;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}
