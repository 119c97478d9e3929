package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.nio.channels.ClosedChannelException;
import org.junit.jupiter.api.Test;

class CallStatusTest {
  @Test
  void connectionFoundClosedIsUnavailableNotUnknown() {
    ClosedChannelException closed = new ClosedChannelException();
    Status status = CallStatus.of(Status.UNKNOWN.withDescription("channel closed").withCause(closed).asRuntimeException());
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription()).isEqualTo("channel closed");
    assertThat(status.getCause()).isSameAs(closed);
  }

  @Test
  void otherStatusesPassUnchanged() {
    assertThat(CallStatus.of(Status.UNKNOWN.withDescription("Application error processing RPC").asRuntimeException())
        .getCode()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(CallStatus.of(Status.ABORTED.asRuntimeException()).getCode()).isEqualTo(Status.Code.ABORTED);
    assertThat(CallStatus.of(new IllegalStateException("x")).getCode()).isEqualTo(Status.Code.UNKNOWN);
  }
}
