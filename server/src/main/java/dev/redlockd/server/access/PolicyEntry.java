package dev.redlockd.server.access;

import java.util.List;
import java.util.Map;

/**
 * One policy entry: the callers it covers, the resource prefixes each permission reaches, and
 * their limits. An empty prefix ({@code ""}) reaches every resource.
 */
record PolicyEntry(IdentityPattern identity, Map<Permission, List<String>> prefixes, Limits limits) {
  PolicyEntry {
    var copy = new java.util.EnumMap<Permission, List<String>>(Permission.class);
    prefixes.forEach((permission, list) -> copy.put(permission, List.copyOf(list)));
    prefixes = java.util.Collections.unmodifiableMap(copy);
  }

  boolean allows(Permission permission, String resource) {
    for (String prefix : prefixes.getOrDefault(permission, List.of())) {
      if (resource.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }
}
