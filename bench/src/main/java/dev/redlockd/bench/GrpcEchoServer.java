package dev.redlockd.bench;

import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import dev.redlockd.node.RedisIo;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The transport floor's server: one unary method that answers with the bytes it was sent, on
 * the same Netty server transport, I/O threads and direct executor as redlockd, in its own
 * JVM like the redlockd server. No .proto: a hand-written method descriptor with a bytes marshaller.
 */
public final class GrpcEchoServer {
  static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .setType(MethodDescriptor.MethodType.UNARY)
      .setFullMethodName(MethodDescriptor.generateFullMethodName("bench.Echo", "Echo"))
      .setRequestMarshaller(Bytes.INSTANCE)
      .setResponseMarshaller(Bytes.INSTANCE)
      .build();

  private static final String LISTENING = "echo listening on port ";

  /** Runs until its standard input closes, so it cannot outlive the bench that started it. */
  public static void main(String[] args) throws Exception {
    RedisIo io = RedisIo.start(Runtime.getRuntime().availableProcessors());
    Server server = NettyServerBuilder.forPort(0)
        .bossEventLoopGroup(io.group())
        .workerEventLoopGroup(io.group())
        .channelType(io.serverChannelType())
        .directExecutor()
        .addService(ServerServiceDefinition.builder("bench.Echo")
            .addMethod(ECHO, ServerCalls.asyncUnaryCall((request, response) -> {
              response.onNext(request);
              response.onCompleted();
            }))
            .build())
        .build()
        .start();
    System.out.println(LISTENING + server.getPort());
    System.out.flush();
    while (System.in.read() >= 0) {
      // wait for EOF
    }
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    io.close();
  }

  /** The echo server as a child process of the bench, started with the bench's own class path. */
  static final class Process implements AutoCloseable {
    private final java.lang.Process process;
    private final int port;

    private Process(java.lang.Process process, int port) {
      this.process = process;
      this.port = port;
    }

    static Process start(List<String> jvmArgs) throws IOException {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.addAll(jvmArgs);
      command.addAll(List.of("-cp", System.getProperty("java.class.path"), GrpcEchoServer.class.getName()));
      java.lang.Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith(LISTENING)) {
          int port = Integer.parseInt(line.substring(LISTENING.length()).trim());
          Thread drain = new Thread(() -> drain(out), "echo-server-output");
          drain.setDaemon(true);
          drain.start();
          return new Process(p, port);
        }
      }
      p.destroyForcibly();
      throw new IllegalStateException("echo server did not start");
    }

    int port() {
      return port;
    }

    long pid() {
      return process.pid();
    }

    private static void drain(BufferedReader out) {
      try {
        while (out.readLine() != null) {
          // the server logs nothing we use
        }
      } catch (IOException e) {
        // the process ended
      }
    }

    @Override
    public void close() throws IOException {
      process.getOutputStream().close();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  private enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
