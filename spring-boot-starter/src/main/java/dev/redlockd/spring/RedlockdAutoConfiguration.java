package dev.redlockd.spring;

import dev.redlockd.client.LockClient;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.util.ClassUtils;

/**
 * redlockd from the {@code redlockd.*} properties ({@link RedlockdProperties}): a channel to the
 * server (the bean {@value #CHANNEL}, shut down with the context), a {@link LockClient}, a
 * {@link RedlockdLockRegistry}, and, when the application has them, a health indicator
 * ({@code redlockd}) and Micrometer meters. Each is made only if the application has none of its
 * own (for the channel: no bean named {@value #CHANNEL}; for the registry: no LockRegistry).
 */
@AutoConfiguration
@EnableConfigurationProperties(RedlockdProperties.class)
public class RedlockdAutoConfiguration {
  /** The name of the channel bean; declare one of this name to give the client your own channel. */
  public static final String CHANNEL = "redlockdChannel";

  @Bean(name = CHANNEL, destroyMethod = "shutdown")
  @ConditionalOnMissingBean(name = CHANNEL)
  public ManagedChannel redlockdChannel(RedlockdProperties properties) {
    return RedlockdChannels.build(properties);
  }

  @Bean
  @ConditionalOnMissingBean
  public LockClient redlockdLockClient(@Qualifier(CHANNEL) Channel channel, RedlockdProperties properties) {
    LockClient.Builder builder = LockClient.builder(channel)
        .defaultTtl(properties.getDefaultTtl())
        .callTimeout(properties.getCallTimeout());
    if (properties.getOwner() != null && !properties.getOwner().isBlank()) {
      builder.owner(properties.getOwner());
    }
    if (properties.isPropagateTraceContext()
        && ClassUtils.isPresent("io.opentelemetry.context.Context", RedlockdAutoConfiguration.class.getClassLoader())) {
      builder.propagateTraceContext();
    }
    return builder.build();
  }

  @Bean(destroyMethod = "destroy")
  @ConditionalOnMissingBean(LockRegistry.class)
  @ConditionalOnProperty(prefix = "redlockd.lock-registry", name = "enabled", matchIfMissing = true)
  public RedlockdLockRegistry redlockdLockRegistry(LockClient client, RedlockdProperties properties,
      ApplicationEventPublisher events) {
    Duration ttl = properties.getLockRegistry().getTtl();
    RedlockdLockRegistry registry = RedlockdLockRegistry.builder(client)
        .prefix(properties.getLockRegistry().getPrefix())
        .ttl(ttl != null ? ttl : properties.getDefaultTtl())
        .build();
    registry.addListener(new LossReporter(registry, events));
    return registry;
  }

  /** With Spring Boot's health support (spring-boot-health, in spring-boot-starter-actuator). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "redlockdHealthIndicator")
    RedlockdHealthIndicator redlockdHealthIndicator(@Qualifier(CHANNEL) Channel channel,
        RedlockdProperties properties) {
      return new RedlockdHealthIndicator(channel, properties.getCallTimeout());
    }
  }

  /** With Micrometer: the registry's meters, bound by Spring Boot to its meter registries. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Meters {
    @Bean
    @ConditionalOnMissingBean
    RedlockdMeters redlockdMeters(ObjectProvider<RedlockdLockRegistry> registry) {
      return new RedlockdMeters(registry.getIfAvailable());
    }
  }
}
