package dev.redlockd.spring;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code redlockd.*} properties. The token never appears in {@link #toString()}. */
@ConfigurationProperties("redlockd")
public class RedlockdProperties {
  /**
   * The server's replicas, {@code host:port} each (calls are spread over those that are up), or
   * one gRPC target with a scheme, such as {@code dns:///redlockd.internal:50051}.
   */
  private List<String> targets = new ArrayList<>(List.of("localhost:50051"));
  /** A bearer token sent with every call ({@code authorization: Bearer ...}); set this or {@link #tokenFile}. */
  private String token;
  /** A file holding the bearer token (read again when it changes, so it can be rotated). */
  private Path tokenFile;
  /** The ttl of leases when none is given ({@code LockOptions.defaultTtl()}, the lock registry's). */
  private Duration defaultTtl = Duration.ofSeconds(30);
  /** The deadline of each call; an Acquire gets its wait on top. */
  private Duration callTimeout = Duration.ofSeconds(5);
  /** Free text operators see beside this client's leases (Describe); empty: host and pid. */
  private String owner = "";
  /**
   * Send the caller's OpenTelemetry trace context (W3C traceparent) with every call, so that the
   * server's spans join the application's traces; only when opentelemetry-api is on the classpath.
   */
  private boolean propagateTraceContext = true;
  private final Tls tls = new Tls();
  private final LockRegistry lockRegistry = new LockRegistry();

  /** TLS to the server; with a certificate and key, mutual TLS. */
  public static class Tls {
    /** Speak TLS (on by itself when any file below is set). */
    private boolean enabled;
    /** PEM bundle of the authorities the server's certificate is checked against; empty: the JDK's. */
    private Path caFile;
    /** PEM client certificate (chain), for mutual TLS. */
    private Path certificateFile;
    /** PEM private key of the client certificate. */
    private Path keyFile;

    public boolean isEnabled() {
      return enabled || caFile != null || certificateFile != null || keyFile != null;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Path getCaFile() {
      return caFile;
    }

    public void setCaFile(Path caFile) {
      this.caFile = caFile;
    }

    public Path getCertificateFile() {
      return certificateFile;
    }

    public void setCertificateFile(Path certificateFile) {
      this.certificateFile = certificateFile;
    }

    public Path getKeyFile() {
      return keyFile;
    }

    public void setKeyFile(Path keyFile) {
      this.keyFile = keyFile;
    }
  }

  /** The Spring Integration {@code LockRegistry}. */
  public static class LockRegistry {
    /** Make a {@link RedlockdLockRegistry} bean (unless the application has a LockRegistry). */
    private boolean enabled = true;
    /** Put before every key to name its resource, e.g. {@code orders-service/}. */
    private String prefix = "";
    /** The leases' ttl; empty: {@code redlockd.default-ttl}. */
    private Duration ttl;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getPrefix() {
      return prefix;
    }

    public void setPrefix(String prefix) {
      this.prefix = prefix;
    }

    public Duration getTtl() {
      return ttl;
    }

    public void setTtl(Duration ttl) {
      this.ttl = ttl;
    }
  }

  public List<String> getTargets() {
    return targets;
  }

  public void setTargets(List<String> targets) {
    this.targets = targets;
  }

  public String getToken() {
    return token;
  }

  public void setToken(String token) {
    this.token = token;
  }

  public Path getTokenFile() {
    return tokenFile;
  }

  public void setTokenFile(Path tokenFile) {
    this.tokenFile = tokenFile;
  }

  public Duration getDefaultTtl() {
    return defaultTtl;
  }

  public void setDefaultTtl(Duration defaultTtl) {
    this.defaultTtl = defaultTtl;
  }

  public Duration getCallTimeout() {
    return callTimeout;
  }

  public void setCallTimeout(Duration callTimeout) {
    this.callTimeout = callTimeout;
  }

  public String getOwner() {
    return owner;
  }

  public void setOwner(String owner) {
    this.owner = owner;
  }

  public boolean isPropagateTraceContext() {
    return propagateTraceContext;
  }

  public void setPropagateTraceContext(boolean propagateTraceContext) {
    this.propagateTraceContext = propagateTraceContext;
  }

  public Tls getTls() {
    return tls;
  }

  public LockRegistry getLockRegistry() {
    return lockRegistry;
  }

  @Override
  public String toString() {
    return "RedlockdProperties[targets=" + targets + ", tls=" + tls.isEnabled()
        + ", token=" + (token != null ? "(set)" : tokenFile != null ? "(file " + tokenFile + ")" : "(none)")
        + ", defaultTtl=" + defaultTtl + ", callTimeout=" + callTimeout + "]";
  }
}
