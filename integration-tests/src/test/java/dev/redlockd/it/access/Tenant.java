package dev.redlockd.it.access;

import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Channel;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/** A caller known by a bearer token made here: its token-file line, and stubs that present the token. */
record Tenant(String identity, String token) {
  private static final SecureRandom RANDOM = new SecureRandom();
  static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  static Tenant named(String identity) {
    byte[] bytes = new byte[24];
    RANDOM.nextBytes(bytes);
    return new Tenant(identity, Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
  }

  /** Its line in a --tokens file: the identity and the token's hash, never the token. */
  String tokenLine() {
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
      return identity + " sha256:" + HexFormat.of().formatHex(hash);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static ClientInterceptor bearer(String token) {
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }

  Channel on(Channel channel) {
    return ClientInterceptors.intercept(channel, bearer(token));
  }

  LockServiceGrpc.LockServiceBlockingStub locks(Channel channel) {
    return LockServiceGrpc.newBlockingStub(on(channel)).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  LockServiceGrpc.LockServiceStub asyncLocks(Channel channel) {
    return LockServiceGrpc.newStub(on(channel)).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  ElectionServiceGrpc.ElectionServiceBlockingStub elections(Channel channel) {
    return ElectionServiceGrpc.newBlockingStub(on(channel)).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  ElectionServiceGrpc.ElectionServiceStub asyncElections(Channel channel) {
    return ElectionServiceGrpc.newStub(on(channel)).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  @Override
  public String toString() {
    return "Tenant[" + identity + "]"; // never the token
  }
}
