package dev.redlockd.it.fuzz;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Sends raw request bytes to one RPC and reports the status the call ended with. */
final class RawCall {
  private RawCall() {}

  /**
   * One call: each message in turn (a unary RPC gets exactly one), then half-close. The
   * deadline bounds a call the server would otherwise leave waiting.
   */
  static Status send(Channel channel, Rpc rpc, List<byte[]> messages, Duration deadline) throws Exception {
    ClientCall<byte[], byte[]> call = channel.newCall(rpc.method,
        CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS));
    CompletableFuture<Status> ended = new CompletableFuture<>();
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onClose(Status status, Metadata trailers) {
        ended.complete(status);
      }
    }, new Metadata());
    call.request(Integer.MAX_VALUE);
    for (byte[] message : messages) {
      call.sendMessage(message);
    }
    call.halfClose();
    // The call's own deadline ends it; this only guards the test against a client-side hang.
    return ended.get(deadline.toMillis() + 10_000, TimeUnit.MILLISECONDS);
  }

  static Status send(Channel channel, Rpc rpc, byte[] message, Duration deadline) throws Exception {
    return send(channel, rpc, List.of(message), deadline);
  }
}
