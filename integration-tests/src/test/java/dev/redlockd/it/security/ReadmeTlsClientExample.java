package dev.redlockd.it.security;

import dev.redlockd.client.LockClient;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.io.IOException;

/**
 * The Java client over (mutual) TLS as docs/operating.md shows it, verbatim between the markers;
 * GrpcTlsTest checks that page still says exactly this and runs it against a server started with
 * --tls-client-ca.
 */
final class ReadmeTlsClientExample {
  private ReadmeTlsClientExample() {}

  record Connected(ManagedChannel channel, LockClient locks) {}

  static Connected connect(String target, File caPem, File clientPem, File clientKey) throws IOException {
    // README:tls-client-example:begin
    ChannelCredentials tls = TlsChannelCredentials.newBuilder()
        .trustManager(caPem)              // the CA that signed the server's certificate
        .keyManager(clientPem, clientKey) // only for mutual TLS (--tls-client-ca)
        .build();
    ManagedChannel channel = Grpc.newChannelBuilder(target, tls).build();
    LockClient locks = LockClient.create(channel);
    // README:tls-client-example:end
    return new Connected(channel, locks);
  }
}
