package dev.redlockd.election;

/** Who leads an election, as everyone may see it: the leader's value and its term (its lease's fencing token). */
public record Leader(String value, long term) {}
