package dev.redlockd.server.rpc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.InputStream;

/**
 * A request marshaller that never throws: bytes that are not a request of the method come out
 * as an {@link Unparseable} carrying the status to end the call with, any other bytes as the
 * method's request message. grpc-java lets a throwing marshaller's exception escape into the
 * call's executor, which ends the call UNKNOWN and logs a SEVERE stack trace through
 * java.util.logging for every such call; a value instead reaches {@link UnparseableRequests},
 * which can refuse the call as bad input, quietly.
 *
 * @param <T> the method's request message
 */
final class TolerantMarshaller<T> implements MethodDescriptor.Marshaller<Object> {
  /** Long enough for any of protobuf's own reasons, short enough to stay a one-line status. */
  private static final int MAX_REASON = 200;

  /** Request bytes that could not be read; {@code status} is what the caller gets. */
  record Unparseable(Status status) {}

  private final MethodDescriptor.Marshaller<T> delegate;
  private final String messageName;

  TolerantMarshaller(MethodDescriptor.Marshaller<T> delegate, String fullMethodName) {
    this.delegate = delegate;
    this.messageName = messageName(delegate, fullMethodName);
  }

  /** Either a {@code T} or an {@link Unparseable}. */
  @Override
  public Object parse(InputStream stream) {
    try {
      return delegate.parse(stream);
    } catch (StatusRuntimeException e) {
      if (e.getCause() instanceof InvalidProtocolBufferException ipbe) {
        return invalid(ipbe);
      }
      // Not the parser: the inbound stream itself refused, e.g. a compressed message that
      // inflates past the size limit (RESOURCE_EXHAUSTED). Its status already says why; the
      // cause is left behind so that nothing about the request travels with it.
      return new Unparseable(Status.fromCode(e.getStatus().getCode()).withDescription(e.getStatus().getDescription()));
    } catch (RuntimeException e) {
      return new Unparseable(StatusMapper.unparseable(messageName, null));
    }
  }

  /** The server never sends requests; kept total so the descriptor stays a valid one. */
  @Override
  @SuppressWarnings("unchecked")
  public InputStream stream(Object value) {
    if (value instanceof Unparseable) {
      throw new IllegalArgumentException("an unparseable request has no bytes to send");
    }
    return delegate.stream((T) value);
  }

  /**
   * Protobuf's reasons name what is wrong with the wire format ("the input ended unexpectedly
   * in the middle of a field", "invalid UTF-8"), never the bytes, so a token in the request
   * cannot leak through them; capped all the same.
   */
  private Unparseable invalid(InvalidProtocolBufferException e) {
    String reason = e.getMessage() == null ? "malformed protobuf" : e.getMessage().strip();
    if (reason.length() > MAX_REASON) {
      reason = reason.substring(0, MAX_REASON) + "...";
    }
    return new Unparseable(StatusMapper.unparseable(messageName, reason));
  }

  private static String messageName(MethodDescriptor.Marshaller<?> marshaller, String fullMethodName) {
    if (marshaller instanceof MethodDescriptor.PrototypeMarshaller<?> prototyped
        && prototyped.getMessagePrototype() instanceof Message message) {
      return message.getDescriptorForType().getFullName();
    }
    return "request of " + fullMethodName;
  }
}
