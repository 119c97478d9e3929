package dev.redlockd.spring;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Sends {@code authorization: Bearer <token>} with every call. From a file, the token is read
 * again whenever the file's modification time changes, so that it can be rotated without a
 * restart. The token appears in no message and no {@code toString()}.
 */
final class BearerToken extends CallCredentials {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final Supplier<String> token;

  private BearerToken(Supplier<String> token) {
    this.token = token;
  }

  static BearerToken of(String token) {
    if (token.isBlank()) {
      throw new IllegalArgumentException("redlockd.token is empty");
    }
    String value = token.strip();
    return new BearerToken(() -> value);
  }

  static BearerToken fromFile(Path file) {
    FileToken reader = new FileToken(file);
    reader.get(); // a missing or empty file stops start-up, not the first call
    return new BearerToken(reader);
  }

  @Override
  public void applyRequestMetadata(RequestInfo requestInfo, Executor appExecutor, MetadataApplier applier) {
    try {
      Metadata headers = new Metadata();
      headers.put(AUTHORIZATION, "Bearer " + token.get());
      applier.apply(headers);
    } catch (RuntimeException e) {
      applier.fail(Status.UNAUTHENTICATED.withDescription("redlockd bearer token: " + e.getMessage()));
    }
  }

  @Override
  public String toString() {
    return "BearerToken[(hidden)]";
  }

  /** The file's token, read again when its modification time changes. */
  private static final class FileToken implements Supplier<String> {
    private final Path file;
    private FileTime readAt; // guarded by this
    private String token; // guarded by this

    FileToken(Path file) {
      this.file = file;
    }

    @Override
    public synchronized String get() {
      try {
        FileTime modified = Files.getLastModifiedTime(file);
        if (!modified.equals(readAt)) {
          String read = Files.readString(file, StandardCharsets.UTF_8).strip();
          if (read.isEmpty()) {
            throw new IllegalStateException("redlockd.token-file " + file + " is empty");
          }
          token = read;
          readAt = modified;
        }
        return token;
      } catch (IOException e) {
        throw new IllegalStateException("redlockd.token-file " + file + " cannot be read: " + e.getMessage(), e);
      }
    }
  }
}
