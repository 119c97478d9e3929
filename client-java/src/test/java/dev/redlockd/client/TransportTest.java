package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import org.junit.jupiter.api.Test;

/**
 * The README's first line of client code must work with nothing but this library declared:
 * without a transport on the class path it throws "No functional channel service provider
 * found". The test class path adds no transport of its own (grpc-inprocess registers none).
 */
class TransportTest {
  @Test
  void theReadmeChannelBuildsWithTheClientsOwnDependencies() {
    ManagedChannel channel = Grpc.newChannelBuilder("127.0.0.1:50051", InsecureChannelCredentials.create()).build();
    try {
      assertThat(channel.getClass().getName()).startsWith("io.grpc");
      assertThat(channel.isShutdown()).isFalse();
    } finally {
      channel.shutdownNow();
    }
  }
}
