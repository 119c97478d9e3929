package dev.redlockd.server;

import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.engine.LockHeldException;
import dev.redlockd.engine.QuorumUnavailableException;
import io.grpc.Status;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one place where engine outcomes become gRPC statuses. */
final class StatusMapper {
  private static final Logger log = LoggerFactory.getLogger(StatusMapper.class);

  private StatusMapper() {}

  static Status toStatus(Throwable failure) {
    Throwable cause = unwrap(failure);
    if (cause instanceof InvalidRequestException) {
      return Status.INVALID_ARGUMENT.withDescription(cause.getMessage());
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
    if (cause instanceof CancellationException) {
      return Status.CANCELLED.withDescription("the call was cancelled");
    }
    log.error("unexpected failure", cause);
    return Status.INTERNAL.withDescription("internal error: " + cause.getClass().getSimpleName());
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
