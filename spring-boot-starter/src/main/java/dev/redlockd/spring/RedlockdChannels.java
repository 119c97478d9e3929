package dev.redlockd.spring;

import dev.redlockd.client.Channels;
import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/** The channel the {@code redlockd.*} properties describe: targets, TLS, bearer token. */
final class RedlockdChannels {
  private RedlockdChannels() {}

  static ManagedChannel build(RedlockdProperties properties) {
    List<String> targets = properties.getTargets();
    if (targets == null || targets.isEmpty()) {
      throw new IllegalArgumentException("redlockd.targets names no server");
    }
    ChannelCredentials credentials = withToken(properties, transport(properties.getTls()));
    if (targets.size() == 1 && targets.get(0).contains(":///")) {
      return Channels.forTarget(targets.get(0).strip(), credentials).build();
    }
    return Channels.forAddresses(targets, credentials).build();
  }

  private static ChannelCredentials transport(RedlockdProperties.Tls tls) {
    if (!tls.isEnabled()) {
      return InsecureChannelCredentials.create();
    }
    if ((tls.getCertificateFile() == null) != (tls.getKeyFile() == null)) {
      throw new IllegalArgumentException(
          "redlockd.tls.certificate-file and redlockd.tls.key-file go together (mutual TLS), one is missing");
    }
    try {
      TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder();
      if (tls.getCaFile() != null) {
        builder.trustManager(tls.getCaFile().toFile());
      }
      if (tls.getCertificateFile() != null) {
        builder.keyManager(tls.getCertificateFile().toFile(), tls.getKeyFile().toFile());
      }
      return builder.build();
    } catch (IOException e) {
      throw new UncheckedIOException("redlockd.tls: " + e.getMessage(), e);
    }
  }

  private static ChannelCredentials withToken(RedlockdProperties properties, ChannelCredentials transport) {
    String token = properties.getToken();
    if (token != null && properties.getTokenFile() != null) {
      throw new IllegalArgumentException("set redlockd.token or redlockd.token-file, not both");
    }
    if (token != null) {
      return CompositeChannelCredentials.create(transport, BearerToken.of(token));
    }
    if (properties.getTokenFile() != null) {
      return CompositeChannelCredentials.create(transport, BearerToken.fromFile(properties.getTokenFile()));
    }
    return transport;
  }
}
