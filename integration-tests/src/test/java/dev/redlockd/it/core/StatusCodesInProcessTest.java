package dev.redlockd.it.core;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.it.support.InProcessServer;
import dev.redlockd.it.support.ServerHarness;
import org.junit.jupiter.api.Test;

/** The status-code contract with the calls carried in-process: no socket, no Netty, same server. */
class StatusCodesInProcessTest extends StatusCodesContract {
  @Override
  protected ServerHarness startServer(String... flags) throws Exception {
    return new InProcessServer(3, flags);
  }

  /** A -1 would become an address like 127.0.0.1:-1 in whatever a caller builds from it. */
  @Test
  void anInProcessServerHasNoTcpPortToGive() {
    assertThatThrownBy(() -> harness().server().port())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no TCP port");
  }
}
