package dev.redlockd.engine;

import java.time.Duration;
import java.util.List;

/**
 * A snapshot of a resource's lock for operators (Describe). Carries no token by design.
 *
 * @param held whether a quorum of voting nodes hold the same lease
 * @param owner the owner text given when the lease was granted or last refreshed; empty if none
 * @param holder the identity of the caller that took it, when the server knew one (under an
 *     access policy); empty otherwise
 * @param remainingTtl how long a quorum still holds it: the quorum-th largest remaining ttl
 *     among the voting nodes that hold it, as read (no drift subtracted)
 * @param fencingToken the highest fencing counter among the voting nodes that hold it
 * @param nodes names (host:port) of the nodes that answered and hold the lease, in node order
 */
public record LockDescription(boolean held, String owner, String holder, Duration remainingTtl, long fencingToken,
    List<String> nodes) {

  public static final LockDescription NOT_HELD = new LockDescription(false, "", "", Duration.ZERO, 0, List.of());

  public LockDescription {
    nodes = List.copyOf(nodes);
  }
}
