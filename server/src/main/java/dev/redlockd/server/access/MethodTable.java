package dev.redlockd.server.access;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ReleaseRequest;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which permission each RPC needs and where its request names the resource: one line per method,
 * keyed by the full gRPC method name. A method not in the table is not governed by the policy
 * (health, reflection). For a stream, every request is checked; a request that names no resource
 * (an empty field, as in Campaign's later requests) is about the resource the stream named first.
 */
public final class MethodTable {
  /** One method's rule: the permission it needs, and the resource a request names ("" for none). */
  public record Rule(String rpc, Permission permission, Function<Object, String> resource) {}

  private static final Map<String, Rule> RULES = Map.ofEntries(
      rule("redlock.v1.LockService/Acquire", Permission.LOCK, AcquireRequest.class, AcquireRequest::getResource),
      rule("redlock.v1.LockService/Extend", Permission.LOCK, ExtendRequest.class, ExtendRequest::getResource),
      rule("redlock.v1.LockService/Release", Permission.LOCK, ReleaseRequest.class, ReleaseRequest::getResource),
      rule("redlock.v1.LockService/KeepAlive", Permission.LOCK, KeepAliveRequest.class,
          KeepAliveRequest::getResource),
      rule("redlock.v1.LockService/Describe", Permission.DESCRIBE, DescribeRequest.class,
          DescribeRequest::getResource),
      rule("redlock.v1.LockService/ForceRelease", Permission.FORCE_RELEASE, ForceReleaseRequest.class,
          ForceReleaseRequest::getResource),
      rule("redlock.v1.ElectionService/Campaign", Permission.CAMPAIGN, CampaignRequest.class,
          CampaignRequest::getElection),
      rule("redlock.v1.ElectionService/Leader", Permission.OBSERVE, LeaderRequest.class,
          LeaderRequest::getElection),
      rule("redlock.v1.ElectionService/Observe", Permission.OBSERVE, ObserveRequest.class,
          ObserveRequest::getElection));

  private MethodTable() {}

  /** The rule for a full method name ({@code redlock.v1.LockService/Acquire}), if it has one. */
  public static Optional<Rule> forMethod(String fullMethodName) {
    return Optional.ofNullable(RULES.get(fullMethodName));
  }

  private static <T> Map.Entry<String, Rule> rule(String fullName, Permission permission, Class<T> type,
      Function<T, String> resource) {
    String rpc = fullName.substring(fullName.indexOf('/') + 1);
    return Map.entry(fullName, new Rule(rpc, permission, request -> resource.apply(type.cast(request))));
  }
}
