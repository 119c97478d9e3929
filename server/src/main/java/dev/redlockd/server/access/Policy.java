package dev.redlockd.server.access;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * An immutable, fully checked policy: who may do what to which resources, and with what share of
 * the server. A caller is governed by the one entry whose pattern matches it most specifically (an
 * exact identity over any wildcard, a longer wildcard prefix over a shorter one); grants are not
 * merged across entries, so reading one entry tells all a caller may do. Nothing matched: nothing
 * allowed.
 */
public final class Policy {
  private final List<PolicyEntry> grants;
  /** Resource and election name prefixes whose names stay out of traces. */
  private final List<String> sensitiveNames;

  Policy(List<PolicyEntry> grants) {
    this(grants, List.of());
  }

  Policy(List<PolicyEntry> grants, List<String> sensitiveNames) {
    this.grants = List.copyOf(grants);
    this.sensitiveNames = List.copyOf(sensitiveNames);
  }

  /**
   * Whether a resource or election name is marked sensitive ({@code sensitive_names}): such names
   * go into no span (the server's traces say only that a name was hidden).
   */
  public boolean nameIsSensitive(String name) {
    for (String prefix : sensitiveNames) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the identity may use the permission on the resource. */
  public boolean allows(String identity, Permission permission, String resource) {
    return entryFor(identity).map(g -> g.allows(permission, resource)).orElse(false);
  }

  /** The identity's limits; an identity no entry covers may hold nothing. */
  public Limits limitsFor(String identity) {
    return entryFor(identity).map(PolicyEntry::limits).orElse(Limits.NONE);
  }

  /** How many entries the policy has (for the line logged when it is loaded). */
  public int size() {
    return grants.size();
  }

  private Optional<PolicyEntry> entryFor(String identity) {
    return grants.stream()
        .filter(g -> g.identity().matches(identity))
        .max(Comparator.comparing((PolicyEntry g) -> !g.identity().isWildcard())
            .thenComparingInt(g -> g.identity().prefix().length()));
  }
}
