package dev.redlockd.node;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.io.IOException;

/**
 * The end of a node connection's pipeline for one connect attempt. What the channel reports
 * reaches the connection only while this attempt is still its current one: the events of a
 * channel dropped and replaced are ignored. A failed TLS handshake and an exception are the node
 * refusing the connection; a close is the node going away.
 */
final class AttemptHandler extends ChannelInboundHandlerAdapter {
  /** The connection the events are for, on its event loop. */
  interface Connection {
    /** Bumped on every connect and drop. */
    int generation();

    void onReply(Object reply);

    /** The channel is gone (after the node's refusal, if it refused). */
    void onFailure(Throwable cause);
  }

  private final NettyRedisNode node;
  private final Connection connection;
  private final int attempt;

  AttemptHandler(NettyRedisNode node, Connection connection, int attempt) {
    this.node = node;
    this.connection = connection;
    this.attempt = attempt;
  }

  private boolean current() {
    return attempt == connection.generation();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object reply) {
    if (current()) {
      connection.onReply(reply);
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    if (event instanceof SslHandshakeCompletionEvent handshake && !handshake.isSuccess() && current()) {
      refused(handshake.cause());
    }
    ctx.fireUserEventTriggered(event);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (current()) {
      connection.onFailure(new IOException("closed by the node"));
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (current()) {
      refused(cause);
    }
  }

  private void refused(Throwable cause) {
    node.noteRefusal(cause);
    connection.onFailure(cause);
  }
}
