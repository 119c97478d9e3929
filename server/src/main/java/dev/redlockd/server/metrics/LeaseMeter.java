package dev.redlockd.server.metrics;

/**
 * What happens to the leases streams keep (a KeepAlive's lease, a Campaign's leadership): each
 * renewal's outcome and each loss. {@link #NONE} counts nothing, for a server without metrics.
 */
public interface LeaseMeter {
  LeaseMeter NONE = new LeaseMeter() {
    @Override
    public void renewed(String stream, boolean held) {}

    @Override
    public void lost(String stream, String code) {}
  };

  /** A renewal of a lease kept by a {@code stream} (KeepAlive, Campaign) reached a quorum ({@code held}) or not (jeopardy). */
  void renewed(String stream, boolean held);

  /** A kept lease was lost; its stream ends with this gRPC status code. */
  void lost(String stream, String code);
}
