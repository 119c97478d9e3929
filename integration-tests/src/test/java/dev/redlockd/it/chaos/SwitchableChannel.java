package dev.redlockd.it.chaos;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;

/**
 * A channel to "replica i" that survives the replica's restart: a restarted server process
 * listens on a new port, so calls go to whichever process currently plays the part. Clients
 * (raw stubs and {@code LockClient} alike) keep one instance for the whole run, as they would
 * keep one DNS name.
 */
final class SwitchableChannel extends Channel {
  private volatile ManagedChannel target;

  SwitchableChannel(ManagedChannel target) {
    this.target = target;
  }

  void switchTo(ManagedChannel next) {
    target = next;
  }

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
    return target.newCall(method, options);
  }

  @Override
  public String authority() {
    return target.authority();
  }
}
