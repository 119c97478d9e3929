package dev.redlockd.node;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Refuses node entries that are one Redis node written two ways ({@code localhost} and
 * {@code 127.0.0.1}, a name and its address): their addresses are looked up, and two entries
 * that share an address and a port are one node, whose vote would count twice. Checked at
 * start-up before any node is contacted; a name that does not resolve (yet) is left to the
 * run_id check the connections make ({@link InstanceIds}).
 */
public final class DistinctEndpoints {
  private DistinctEndpoints() {}

  /** Throws IllegalArgumentException with one line naming both entries. */
  public static void check(List<NodeAddress> nodes) {
    check(nodes, InetAddress::getAllByName, Duration.ofSeconds(2));
  }

  static void check(List<NodeAddress> nodes, OffLoopResolver.Lookup lookup, Duration bound) {
    List<Set<String>> endpoints = resolve(nodes, lookup, bound);
    for (int i = 0; i < nodes.size(); i++) {
      for (int j = 0; j < i; j++) {
        Set<String> shared = new HashSet<>(endpoints.get(i));
        shared.retainAll(endpoints.get(j));
        if (!shared.isEmpty()) {
          throw new IllegalArgumentException("--redis names one Redis node twice: " + nodes.get(j) + " and "
              + nodes.get(i) + " both reach " + shared.stream().sorted().findFirst().orElseThrow()
              + "; one node must not vote twice");
        }
      }
    }
  }

  /** Each entry's address:port pairs; empty for a name that did not resolve within the bound. */
  private static List<Set<String>> resolve(List<NodeAddress> nodes, OffLoopResolver.Lookup lookup, Duration bound) {
    ExecutorService threads = Executors.newCachedThreadPool(new DefaultThreadFactory("redlockd-resolve-check", true));
    try {
      List<CompletableFuture<Set<String>>> lookups = new ArrayList<>();
      for (NodeAddress node : nodes) {
        lookups.add(CompletableFuture.supplyAsync(() -> {
          Set<String> found = new HashSet<>();
          try {
            for (InetAddress address : lookup.all(node.host())) {
              found.add(endpoint(address, node.port()));
            }
          } catch (Exception e) {
            // unknown for now: the connection will say why, and the run_id check still applies
          }
          return found;
        }, threads));
      }
      long deadline = System.nanoTime() + bound.toNanos();
      List<Set<String>> endpoints = new ArrayList<>();
      for (CompletableFuture<Set<String>> each : lookups) {
        try {
          endpoints.add(each.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          endpoints.add(Set.of());
        } catch (Exception e) {
          endpoints.add(Set.of());
        }
      }
      return endpoints;
    } finally {
      threads.shutdownNow();
    }
  }

  private static String endpoint(InetAddress address, int port) {
    String host = address.getHostAddress();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }
}
