package dev.redlockd.it.support;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Records critical sections per resource as the protected resource would see them: a second
 * holder entering while one is inside is an overlap, and a fencing token not above the last
 * one accepted is a fencing violation.
 */
public final class ExclusionChecker {
  private final Map<String, AtomicReference<String>> inside = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lastFence = new ConcurrentHashMap<>();
  public final AtomicInteger overlaps = new AtomicInteger();
  public final AtomicInteger fenceViolations = new AtomicInteger();
  public final AtomicInteger sections = new AtomicInteger();

  public void enter(String resource, String holder, long fence) {
    if (!inside.computeIfAbsent(resource, r -> new AtomicReference<>()).compareAndSet(null, holder)) {
      overlaps.incrementAndGet();
    }
    // Inside the section, so the order seen here is the grant order.
    AtomicLong last = lastFence.computeIfAbsent(resource, r -> new AtomicLong());
    if (Long.compareUnsigned(fence, last.get()) <= 0) {
      fenceViolations.incrementAndGet();
    }
    last.set(fence);
    sections.incrementAndGet();
  }

  public void exit(String resource, String holder) {
    if (!inside.get(resource).compareAndSet(holder, null)) {
      overlaps.incrementAndGet();
    }
  }
}
