package dev.redlockd.it.core;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.it.support.ServerHarness;

/** The status-code contract over Netty on a real socket, as deployed clients see it. */
class StatusCodesOverNettyTest extends StatusCodesContract {
  @Override
  protected ServerHarness startServer(String... flags) throws Exception {
    return new LiveServer(3, flags);
  }
}
