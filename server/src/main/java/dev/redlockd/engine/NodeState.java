package dev.redlockd.engine;

/** What the engine last learnt about a node. Only UP nodes vote. */
public enum NodeState {
  /** Not probed yet. */
  UNKNOWN,
  /** Answers and holds its incarnation key. */
  UP,
  /** Did not answer within the node timeout. */
  DOWN,
  /** Lost its data; sits out until every lock it may have held has expired. */
  QUARANTINED,
  /** Holds no key of ours at all while the engine decides whether the whole cluster is new. */
  BLANK
}
