package dev.redlockd.node;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * Lettuce's failures as the engine reads the built-in client's: an error reply is a
 * {@link RedisErrorReply}, silence past the node timeout a {@link TimeoutException}, and a
 * connection that failed, dropped or is down a {@link NodeConnectionException}.
 */
final class LettuceFailures {
  private LettuceFailures() {}

  static Throwable translate(Throwable failure, String node, long timeoutMillis) {
    Throwable cause = unwrap(failure);
    if (cause instanceof RedisCommandExecutionException error) {
      return new RedisErrorReply(error.getMessage());
    }
    if (cause instanceof RedisCommandTimeoutException || cause instanceof TimeoutException) {
      return new TimeoutException("Redis node " + node + " did not answer within " + timeoutMillis + "ms");
    }
    if (cause instanceof RedisException || cause instanceof IOException) {
      return new NodeConnectionException("connection to Redis node " + node + " failed: " + cause, cause);
    }
    return cause;
  }

  static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  static boolean isNoScript(Throwable failure) {
    return unwrap(failure) instanceof RedisNoScriptException;
  }

  /**
   * Why a connect failed when retrying cannot help (a refused login, a certificate that will
   * not be accepted), worth telling an operator once; null for a node that is merely down.
   */
  static String refusal(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SSLException) {
        return "TLS handshake failed: " + t.getMessage();
      }
      if (t instanceof RedisCommandExecutionException error && error.getMessage() != null
          && error.getMessage().matches("(NOAUTH|WRONGPASS|NOPERM)\\b.*")) {
        return "login refused: " + error.getMessage();
      }
    }
    return null;
  }
}
