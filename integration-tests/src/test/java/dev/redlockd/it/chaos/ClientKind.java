package dev.redlockd.it.chaos;

/** How a chaos client takes and keeps its locks; the run mixes all three. */
enum ClientKind {
  /** Acquire, sometimes Extend, Release over the generated blocking stubs. */
  RAW,
  /** {@code LockClient.acquire} then {@code Lease.keepAlive()}: renewals over a KeepAlive stream. */
  KEEP_ALIVE,
  /** {@code LockClient.withLock}: acquire, keep alive, run, release, all done by the client. */
  WITH_LOCK
}
