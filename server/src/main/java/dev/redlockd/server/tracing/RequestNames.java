package dev.redlockd.server.tracing;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;

/**
 * What a request's first message adds to its span: the resource or election it names (unless
 * the name is sensitive: then only that a name was hidden), and for Acquire the ttl and wait
 * asked for. Never a token, never the owner text.
 */
final class RequestNames {
  static final AttributeKey<String> RESOURCE = AttributeKey.stringKey("redlockd.resource");
  static final AttributeKey<String> ELECTION = AttributeKey.stringKey("redlockd.election");
  static final AttributeKey<Boolean> NAME_HIDDEN = AttributeKey.booleanKey("redlockd.name_hidden");
  static final AttributeKey<Long> PERMITS = AttributeKey.longKey("redlockd.acquire.permits");
  static final AttributeKey<Long> TTL_MS = AttributeKey.longKey("redlockd.ttl_ms");
  static final AttributeKey<Long> WAIT_MS = AttributeKey.longKey("redlockd.acquire.wait_ms");
  static final AttributeKey<Boolean> RESUME = AttributeKey.booleanKey("redlockd.campaign.resume");

  private RequestNames() {}

  static void record(Object message, Span span, NameFilter filter) {
    if (message instanceof AcquireRequest r) {
      name(span, filter, RESOURCE, r.getResource());
      if (r.getPermits() != 0) {
        span.setAttribute(PERMITS, (long) r.getPermits());
      }
      if (r.hasTtl()) {
        span.setAttribute(TTL_MS, millis(r.getTtl()));
      }
      span.setAttribute(WAIT_MS, r.hasWait() ? millis(r.getWait()) : 0L);
    } else if (message instanceof KeepAliveRequest r) {
      name(span, filter, RESOURCE, r.getResource());
      if (r.hasTtl()) {
        span.setAttribute(TTL_MS, millis(r.getTtl()));
      }
    } else if (message instanceof ExtendRequest r) {
      name(span, filter, RESOURCE, r.getResource());
    } else if (message instanceof ReleaseRequest r) {
      name(span, filter, RESOURCE, r.getResource());
    } else if (message instanceof DescribeRequest r) {
      name(span, filter, RESOURCE, r.getResource());
    } else if (message instanceof ForceReleaseRequest r) {
      name(span, filter, RESOURCE, r.getResource());
    } else if (message instanceof CampaignRequest r) {
      name(span, filter, ELECTION, r.getElection());
      span.setAttribute(RESUME, r.getResume());
      if (r.hasTtl()) {
        span.setAttribute(TTL_MS, millis(r.getTtl()));
      }
    } else if (message instanceof LeaderRequest r) {
      name(span, filter, ELECTION, r.getElection());
    } else if (message instanceof ObserveRequest r) {
      name(span, filter, ELECTION, r.getElection());
    }
  }

  private static void name(Span span, NameFilter filter, AttributeKey<String> key, String name) {
    if (filter.isSensitive(name)) {
      span.setAttribute(NAME_HIDDEN, true);
    } else {
      span.setAttribute(key, name);
    }
  }

  private static long millis(com.google.protobuf.Duration d) {
    return d.getSeconds() * 1000 + d.getNanos() / 1_000_000;
  }
}
