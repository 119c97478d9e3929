package dev.redlockd.it.client;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.it.support.ServerHarness;

/** The Java client's contract over Netty on a real socket, as deployed clients see it. */
class ClientOverNettyTest extends ClientContract {
  @Override
  protected ServerHarness startServer(String... flags) throws Exception {
    return new LiveServer(3, flags);
  }
}
