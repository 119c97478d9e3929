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

    @Override
    public void stopped(String stream, String reason) {}
  };

  /** A renewal of a lease kept by a {@code stream} (KeepAlive, Campaign) reached a quorum ({@code held}) or not (jeopardy). */
  void renewed(String stream, boolean held);

  /** A kept lease was lost; its stream ends with this gRPC status code. */
  void lost(String stream, String code);

  /**
   * The server stopped renewing what a {@code stream} keeps and ended the stream, releasing
   * nothing: {@code reason} {@value #READER_SILENT} (no request from its client for longer than
   * the ttl), {@value #NO_QUORUM} (a renewal reached no quorum: handed on to another replica) or
   * {@value #SUPERSEDED} (a newer stream of the same holder keeps it here now).
   */
  void stopped(String stream, String reason);

  /** {@link #stopped}: the client sent nothing for longer than its own deadline could reach. */
  String READER_SILENT = "reader_silent";
  /** {@link #stopped}: this replica reached no quorum; the holder resumes through another one. */
  String NO_QUORUM = "no_quorum";
  /** {@link #stopped}: the holder keeps it on this replica through a newer stream now. */
  String SUPERSEDED = "superseded";
}
