package dev.redlockd.node;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/** The client side of a {@code rediss://} connection, the same whichever client opens it. */
final class TlsEngines {
  private TlsEngines() {}

  static SSLEngine client(SSLContext context, NodeAddress address) {
    SSLEngine engine = context.createSSLEngine(address.host(), address.port());
    engine.setUseClientMode(true);
    // Without this any certificate the trusted authorities ever signed would do, for any host.
    SSLParameters parameters = engine.getSSLParameters();
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    engine.setSSLParameters(parameters);
    return engine;
  }
}
