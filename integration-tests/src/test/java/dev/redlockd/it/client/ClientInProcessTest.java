package dev.redlockd.it.client;

import dev.redlockd.it.support.InProcessServer;
import dev.redlockd.it.support.ServerHarness;

/** The Java client's contract with the calls carried in-process: no socket, no Netty, same server. */
class ClientInProcessTest extends ClientContract {
  @Override
  protected ServerHarness startServer(String... flags) throws Exception {
    return new InProcessServer(3, flags);
  }
}
