package dev.redlockd.server.tracing;


/**
 * Which resource and election names may go into spans: those the access policy does not mark
 * sensitive ({@code sensitive_names} in the policy file). Read at each call, so a policy reload
 * takes effect for the calls that follow.
 */
@FunctionalInterface
public interface NameFilter {
  /** Every name may be traced (no policy, or one that marks none). */
  NameFilter NONE = name -> false;

  boolean isSensitive(String name);
}
