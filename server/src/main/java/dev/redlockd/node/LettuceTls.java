package dev.redlockd.node;

import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import javax.net.ssl.SSLContext;

/**
 * TLS for Lettuce's connections to a {@code rediss://} node, from the SSLContext the server
 * made of its PEM files (or the JVM's default). Lettuce's own TLS builds a context of its own
 * from key and trust stores and cannot take a ready one, so Lettuce is told the node speaks
 * plain RESP and this handler, first in the pipeline, encrypts it: the same engine, host
 * check included, as the built-in client's. Lettuce's handshake commands wait in the handler
 * until the TLS handshake is done; a failed one closes the channel and fails the connect.
 */
final class LettuceTls implements NettyCustomizer {
  private final SSLContext context;
  private final NodeAddress address;

  LettuceTls(SSLContext context, NodeAddress address) {
    this.context = context;
    this.address = address;
  }

  @Override
  public void afterChannelInitialized(Channel channel) {
    channel.pipeline().addFirst(new SslHandler(TlsEngines.client(context, address)));
  }
}
