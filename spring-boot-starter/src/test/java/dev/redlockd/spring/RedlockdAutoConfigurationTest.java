package dev.redlockd.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.protobuf.services.HealthStatusManager;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/** The auto-configuration in Spring Boot's context runner, against the real server. */
@ExtendWith(BackendExtension.class)
class RedlockdAutoConfigurationTest {
  private final Backend backend;
  private final ApplicationContextRunner runner;

  RedlockdAutoConfigurationTest(Backend backend) {
    this.backend = backend;
    this.runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RedlockdAutoConfiguration.class))
        .withPropertyValues("redlockd.targets=" + backend.target(), "redlockd.lock-registry.prefix=auto/",
            "redlockd.lock-registry.ttl=3s");
  }

  @Test
  void makesAChannelAClientALockRegistryAndAHealthIndicatorFromTheProperties() {
    ManagedChannel[] channel = new ManagedChannel[1];
    runner.run(context -> {
      assertThat(context).hasNotFailed();
      channel[0] = context.getBean(RedlockdAutoConfiguration.CHANNEL, ManagedChannel.class);
      String key = UUID.randomUUID().toString();
      try (Lease lease = context.getBean(LockClient.class).acquire("auto/client-" + key, LockOptions.defaultTtl())) {
        assertThat(lease.isValid()).isTrue();
      }
      LockRegistry<?> registry = context.getBean(LockRegistry.class);
      assertThat(registry).isInstanceOf(RedlockdLockRegistry.class);
      assertThat(((RedlockdLockRegistry) registry).ttl()).isEqualTo(Duration.ofSeconds(3));
      registry.executeLocked(key, () -> assertThat(backend.held("auto/" + key)).isTrue());
      assertThat(context.getBean(RedlockdHealthIndicator.class).health(true).getStatus()).isEqualTo(Status.UP);
    });
    assertThat(channel[0].isShutdown()).as("the channel is shut down with the context").isTrue();
  }

  @Test
  void backsOffWhereTheApplicationHasItsOwn() {
    runner.withUserConfiguration(OwnBeans.class).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context.getBean(RedlockdAutoConfiguration.CHANNEL)).isSameAs(OwnBeans.CHANNEL);
      assertThat(context.getBean(LockRegistry.class)).isInstanceOf(DefaultLockRegistry.class);
      assertThat(context).doesNotHaveBean(RedlockdLockRegistry.class);
    });
    runner.withPropertyValues("redlockd.lock-registry.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(LockRegistry.class).hasSingleBean(LockClient.class));
    OwnBeans.CHANNEL.shutdownNow();
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnBeans {
    static final ManagedChannel CHANNEL = io.grpc.Grpc.newChannelBuilder("127.0.0.1:1",
        io.grpc.InsecureChannelCredentials.create()).build();

    @Bean(name = RedlockdAutoConfiguration.CHANNEL, destroyMethod = "")
    ManagedChannel redlockdChannel() {
      return CHANNEL;
    }

    @Bean
    DefaultLockRegistry ownRegistry() {
      return new DefaultLockRegistry();
    }
  }

  @Test
  void healthIsDownWithTheCallsStatusWhenNoServerAnswers() {
    runner.withPropertyValues("redlockd.targets=127.0.0.1:1", "redlockd.call-timeout=1s").run(context -> {
      var health = context.getBean(RedlockdHealthIndicator.class).health(true);
      assertThat(health.getStatus()).isEqualTo(Status.DOWN);
      // UNAVAILABLE: nothing listens; DEADLINE_EXCEEDED when the machine is too busy to find out in time.
      assertThat(health.getDetails().get("status")).isIn("UNAVAILABLE", "DEADLINE_EXCEEDED");
    });
  }

  @Test
  void aLostLeaseIsPublishedAsAnEventAndCountedAsSoonAsItIsKnown() {
    List<RedlockdLockLostEvent> events = new CopyOnWriteArrayList<>();
    runner.withBean("lostEvents", ApplicationListener.class,
            () -> (ApplicationListener<RedlockdLockLostEvent>) events::add)
        .run(context -> {
          SimpleMeterRegistry meters = new SimpleMeterRegistry();
          context.getBean(RedlockdMeters.class).bindTo(meters);
          RedlockdLockRegistry registry = context.getBean(RedlockdLockRegistry.class);
          String key = UUID.randomUUID().toString();
          RedlockdLock lock = registry.obtain(key);
          lock.lock();
          assertThat(meters.get("redlockd.lock.held").gauge().value()).isEqualTo(1.0);
          assertThat(meters.get("redlockd.lock.acquisitions").tag("outcome", "acquired").timer().count())
              .isEqualTo(1);
          backend.forceRelease("auto/" + key);
          await().atMost(Duration.ofSeconds(5)).until(() -> !events.isEmpty());
          assertThat(events.get(0).lockKey()).isEqualTo(key);
          assertThat(meters.get("redlockd.lock.losses").counter().count()).isEqualTo(1.0);
          assertThatThrownBy(lock::unlock).isSameAs(events.get(0).exception());
          assertThat(meters.get("redlockd.lock.held").gauge().value()).isZero();
        });
  }

  @Test
  void aBearerTokenGoesWithEveryCallAndIsReadAgainWhenItsFileChanges(@TempDir Path dir) throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    ServerInterceptor recorder = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        seen.add(headers.get(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)));
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) { }, headers);
      }
    };
    HealthStatusManager health = new HealthStatusManager();
    health.setStatus("redlock.v1.LockService", io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
    Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
        .addService(ServerInterceptors.intercept(health.getHealthService(), recorder)).build().start();
    try {
      Path tokenFile = dir.resolve("token");
      Files.writeString(tokenFile, "first-token\n");
      ApplicationContextRunner local = new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(RedlockdAutoConfiguration.class))
          .withPropertyValues("redlockd.targets=127.0.0.1:" + server.getPort());
      local.withPropertyValues("redlockd.token=inline-token").run(context -> {
        assertThat(context.getBean(RedlockdHealthIndicator.class).health(true).getStatus()).isEqualTo(Status.UP);
        assertThat(context.getBean(RedlockdProperties.class).toString()).doesNotContain("inline-token");
      });
      local.withPropertyValues("redlockd.token-file=" + tokenFile).run(context -> {
        RedlockdHealthIndicator indicator = context.getBean(RedlockdHealthIndicator.class);
        indicator.health(true);
        Files.writeString(tokenFile, "second-token\n");
        Files.setLastModifiedTime(tokenFile, FileTime.from(Instant.now().plusSeconds(5)));
        indicator.health(true);
      });
      assertThat(seen).containsExactly("Bearer inline-token", "Bearer first-token", "Bearer second-token");
      local.withPropertyValues("redlockd.token=a", "redlockd.token-file=" + tokenFile)
          .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
              .hasMessageContaining("not both"));
    } finally {
      server.shutdownNow();
    }
  }
}
