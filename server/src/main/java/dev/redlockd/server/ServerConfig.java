package dev.redlockd.server;

import com.google.common.net.InetAddresses;
import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.server.access.Access;
import dev.redlockd.server.access.AccessControl;
import dev.redlockd.server.access.PolicyException;
import dev.redlockd.server.tls.RedisTls;
import dev.redlockd.server.tls.ServerTls;
import io.grpc.ServerCredentials;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

/**
 * The server's flags. Each flag can also be set by an environment variable: {@code --max-ttl}
 * is {@code REDLOCKD_MAX_TTL}; a flag on the command line wins.
 */
@Command(name = "redlockd", mixinStandardHelpOptions = true, version = "redlockd 0.1.0",
    sortOptions = false, modelTransformer = EnvironmentHelp.class,
    description = "A gRPC lock service running the Redlock algorithm over N independent Redis masters.",
    footer = {"", "A flag on the command line wins over its environment variable. Environment only: "
        + LogLevel.VARIABLE + ", one of " + LogLevel.VALID + " (default INFO)."})
public final class ServerConfig {
  /** The environment variable an option reads, and its default: {@code ${env:NAME:-default}}. */
  private static final Pattern ENV_DEFAULT = Pattern.compile("^\\$\\{env:(\\w+):-(.*)}$");
  private static final Pattern FLAG = Pattern.compile("--[a-z][a-z0-9-]*");

  // Empty: 0.0.0.0, or 127.0.0.1 in dev mode, whose access control is open (bindAddress()).
  @Option(names = "--bind", defaultValue = "${env:REDLOCKD_BIND:-}", paramLabel = "<address>",
      description = "The address the gRPC and metrics ports listen on: 0.0.0.0 (every interface), 127.0.0.1 "
          + "(this machine only) or one interface's address (default 0.0.0.0; with --dev, 127.0.0.1).")
  String bind;

  @Option(names = "--port", defaultValue = "${env:REDLOCKD_PORT:-50051}",
      description = "gRPC port; 0 picks a free one and logs it (default ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--metrics-port", defaultValue = "${env:REDLOCKD_METRICS_PORT:-0}",
      description = "Serve Prometheus metrics at http://<host>:<port>/metrics on the --bind address; "
          + "0 = no metrics (default ${DEFAULT-VALUE}).")
  int metricsPort;

  @Option(names = "--tls-cert", defaultValue = "${env:REDLOCKD_TLS_CERT:-}", paramLabel = "<pem file>",
      description = "Serve gRPC over TLS only, with this PEM certificate chain (leaf first); needs --tls-key.")
  String tlsCert;

  @Option(names = "--tls-key", defaultValue = "${env:REDLOCKD_TLS_KEY:-}", paramLabel = "<pem file>",
      description = "The PEM PKCS#8 private key (-----BEGIN PRIVATE KEY-----) of --tls-cert.")
  String tlsKey;

  @Option(names = "--tls-client-ca", defaultValue = "${env:REDLOCKD_TLS_CLIENT_CA:-}", paramLabel = "<pem file>",
      description = "Mutual TLS: only clients with a certificate signed by an authority in this PEM bundle "
          + "are let in; needs --tls-cert.")
  String tlsClientCa;

  @Option(names = "--policy", defaultValue = "${env:REDLOCKD_POLICY:-}", paramLabel = "<json file>",
      description = "Access policy: which identities may lock, describe, force-release, campaign and observe which "
          + "resource and election prefixes, and their limits; reloaded on SIGHUP and when the file changes. "
          + "Empty: every caller may do everything.")
  String policy;

  @Option(names = "--tokens", defaultValue = "${env:REDLOCKD_TOKENS:-}", paramLabel = "<file>",
      description = "Bearer tokens for --policy, one '<identity> sha256:<hex>' per line (hashes only); "
          + "reloaded with the policy; needs --policy.")
  String tokens;

  @Option(names = "--allow-plaintext-tokens", defaultValue = "${env:REDLOCKD_ALLOW_PLAINTEXT_TOKENS:-false}",
      fallbackValue = "true", arity = "0..1",
      description = "Accept --tokens on a plaintext gRPC port (no --tls-cert) bound to more than loopback, where "
          + "bearer tokens cross the network in clear; without it such a server refuses to start "
          + "(default ${DEFAULT-VALUE}).")
  boolean allowPlaintextTokens;

  @Option(names = "--redis", defaultValue = "${env:REDLOCKD_REDIS:-}",
      description = "The N Redis masters: redis://[user:password@]host:port,... or rediss:// for TLS; "
          + "database 0 only; each may be given a stable id as id=redis://... (else its id is host:port). "
          + "Required unless --dev.")
  String redis;

  @Option(names = "--redis-next", defaultValue = "${env:REDLOCKD_REDIS_NEXT:-}",
      description = "During a change of the Redis masters (docs/operating.md, \"Growing past five nodes\"): the new "
          + "list, in --redis's syntax. While it is given, every grant and renewal needs a quorum of each resource's "
          + "set under --redis and of its set under --redis-next, and renewals move leases onto their new sets. "
          + "Empty: no change under way (default).")
  String redisNext;

  @Option(names = "--nodes-per-resource", defaultValue = "${env:REDLOCKD_NODES_PER_RESOURCE:-0}",
      paramLabel = "<n>",
      description = "How many of the N Redis nodes each resource, permit and leadership lives on (the first n "
          + "of its rendezvous order over the node ids); its quorum is a majority of those n. Odd, 1..N, or N; "
          + "0: all N, as before sets (default ${DEFAULT-VALUE}).")
  int nodesPerResource;

  @Option(names = "--dev", defaultValue = "${env:REDLOCKD_DEV:-false}", fallbackValue = "true", arity = "0..1",
      description = "Dev mode, instead of --redis: the server starts --dev-nodes local Redis nodes that keep "
          + "nothing on disk and stop with it. Not for production (default ${DEFAULT-VALUE}).")
  boolean dev;

  @Option(names = "--redis-tls-ca", defaultValue = "${env:REDLOCKD_REDIS_TLS_CA:-}", paramLabel = "<pem file>",
      description = "For rediss:// nodes: trust the authorities in this PEM bundle instead of the JVM's default ones.")
  String redisTlsCa;

  @Option(names = "--redis-tls-cert", defaultValue = "${env:REDLOCKD_REDIS_TLS_CERT:-}", paramLabel = "<pem file>",
      description = "For rediss:// nodes that ask for client certificates: this PEM certificate chain; "
          + "needs --redis-tls-key.")
  String redisTlsCert;

  @Option(names = "--redis-tls-key", defaultValue = "${env:REDLOCKD_REDIS_TLS_KEY:-}", paramLabel = "<pem file>",
      description = "The PEM PKCS#8 private key of --redis-tls-cert.")
  String redisTlsKey;

  @Option(names = "--key-prefix", defaultValue = "${env:REDLOCKD_KEY_PREFIX:-redlock:}",
      description = "Prefix of every key written to Redis (default ${DEFAULT-VALUE}).")
  String keyPrefix;

  @Option(names = "--node-timeout", defaultValue = "${env:REDLOCKD_NODE_TIMEOUT:-50ms}",
      converter = DurationFlag.class,
      description = "How long one Redis node may take to answer (default ${DEFAULT-VALUE}).")
  Duration nodeTimeout;

  @Option(names = "--admission-latency", defaultValue = "${env:REDLOCKD_ADMISSION_LATENCY:-auto}",
      description = "Admission control: while the server's Redis rounds wait longer than this for a quorum of nodes "
          + "(averaged over 100 ms), new Acquire calls and KeepAlive streams are refused at once with UNAVAILABLE "
          + "and a grpc-retry-pushback-ms trailer; renewals, Extend and Release never are. auto: "
          + "--node-timeout; 0: off (default ${DEFAULT-VALUE}).")
  String admissionLatency;

  @Option(names = "--io-threads", defaultValue = "${env:REDLOCKD_IO_THREADS:-0}",
      description = "Threads that serve gRPC and talk to Redis, each with one connection to every node, over "
          + "which it pipelines whatever its calls send together (default 0: one per core).")
  int ioThreads;

  @Option(names = "--drift-factor", defaultValue = "${env:REDLOCKD_DRIFT_FACTOR:-0.01}",
      description = "Share of the ttl held back for clock drift; validity = ttl - elapsed - "
          + "(ttl * drift-factor + 2ms) (default ${DEFAULT-VALUE}).")
  double driftFactor;

  @Option(names = "--min-ttl", defaultValue = "${env:REDLOCKD_MIN_TTL:-10ms}", converter = DurationFlag.class,
      description = "Smallest ttl a caller may ask for (default ${DEFAULT-VALUE}).")
  Duration minTtl;

  @Option(names = "--max-ttl", defaultValue = "${env:REDLOCKD_MAX_TTL:-1h}", converter = DurationFlag.class,
      description = "Largest ttl a caller may ask for; also how long a Redis node that restarted empty "
          + "sits out (default ${DEFAULT-VALUE}).")
  Duration maxTtl;

  @Option(names = "--retry-delay", defaultValue = "${env:REDLOCKD_RETRY_DELAY:-100ms}",
      converter = DurationFlag.class,
      description = "A waiting Acquire retries after a random delay between half and all of this; "
          + "a release through this server wakes its waiters at once (default ${DEFAULT-VALUE}).")
  Duration retryDelay;

  @Option(names = "--max-waiting-acquires", defaultValue = "${env:REDLOCKD_MAX_WAITING_ACQUIRES:-10000}",
      description = "Acquire calls with a wait that may be under way at once; past it RESOURCE_EXHAUSTED "
          + "(default ${DEFAULT-VALUE}).")
  int maxWaitingAcquires;

  @Option(names = "--max-streams", defaultValue = "${env:REDLOCKD_MAX_STREAMS:-100000}",
      description = "KeepAlive, Campaign and Observe streams that may be open at once; past it RESOURCE_EXHAUSTED "
          + "(default ${DEFAULT-VALUE}).")
  int maxStreams;

  /** Removed; still parsed only so that a deployment that sets it stops with the reason. */
  @Option(names = "--release-on-disconnect", hidden = true,
      defaultValue = "${env:REDLOCKD_RELEASE_ON_DISCONNECT:-false}", fallbackValue = "true", arity = "0..1")
  boolean releaseOnDisconnect;

  @Option(names = "--batch-scripts", defaultValue = "${env:REDLOCKD_BATCH_SCRIPTS:-false}",
      fallbackValue = "true", arity = "0..1",
      description = "Send the Lua scripts one I/O thread makes for a node in one pass as one batch script call "
          + "instead of one EVALSHA each (measured slower on Redis 7.0, see docs/performance.md) "
          + "(default ${DEFAULT-VALUE}).")
  boolean batchScripts;

  @Option(names = "--notify-waiters", defaultValue = "${env:REDLOCKD_NOTIFY_WAITERS:-true}",
      fallbackValue = "true", arity = "0..1",
      description = "Announce each release on the Redis nodes' pub/sub, so that Acquire calls and candidates "
          + "waiting on other servers try again at once; false: they find out at their next retry "
          + "(--retry-delay) (default ${DEFAULT-VALUE}).")
  boolean notifyWaiters;

  @Option(names = "--thrifty-rounds", defaultValue = "${env:REDLOCKD_THRIFTY_ROUNDS:-false}",
      fallbackValue = "true", arity = "0..1",
      description = "Send each grant and renewal to a quorum of the Redis nodes first (each key's own "
          + "rendezvous-hashing order, skipping nodes known down), and to the others only when one of them "
          + "refuses, errs or times out, instead of to every node (default ${DEFAULT-VALUE}).")
  boolean thriftyRounds;

  @Option(names = "--allow-force-release", defaultValue = "${env:REDLOCKD_ALLOW_FORCE_RELEASE:-false}",
      fallbackValue = "true", arity = "0..1",
      description = "Serve the ForceRelease RPC, which deletes a resource's lock whatever its token; without "
          + "this flag it answers PERMISSION_DENIED (default ${DEFAULT-VALUE}).")
  boolean allowForceRelease;

  @Option(names = "--keepalive-time", defaultValue = "${env:REDLOCKD_KEEPALIVE_TIME:-10s}",
      converter = DurationFlag.class,
      description = "After this long without hearing from a client, ping it (HTTP/2 PING), so a holder "
          + "that vanished without closing its connection is noticed; grpc-java pings no more often than "
          + "every 10s, whatever is set (default ${DEFAULT-VALUE}).")
  Duration keepAliveTime;

  @Option(names = "--keepalive-timeout", defaultValue = "${env:REDLOCKD_KEEPALIVE_TIMEOUT:-5s}",
      converter = DurationFlag.class,
      description = "How long a ping may go unanswered before the connection is closed and its KeepAlive "
          + "streams end as disconnected (default ${DEFAULT-VALUE}).")
  Duration keepAliveTimeout;

  @Option(names = "--permit-keepalive-time", defaultValue = "${env:REDLOCKD_PERMIT_KEEPALIVE_TIME:-1s}",
      converter = DurationFlag.class,
      description = "How often a client may ping this server (HTTP/2 PING) to check that it still answers; a "
          + "client that pings more often is disconnected (GOAWAY too_many_pings). The redlockd clients ping "
          + "every 2s while a call is open (Java and Go every 10s, their gRPC's floor): keep this at or below "
          + "2s (default ${DEFAULT-VALUE}).")
  Duration permitKeepAliveTime;

  @Option(names = "--dev-nodes", defaultValue = "${env:REDLOCKD_DEV_NODES:-3}",
      description = "In dev mode (--dev), how many local Redis nodes to start (default ${DEFAULT-VALUE}).")
  int devNodes;

  /** Scratch leases a start runs before it listens, unless --warm-up says otherwise ({@link WarmUp}). */
  public static final int WARM_UP_DEFAULT = 200;

  @Option(names = "--warm-up", defaultValue = "${env:REDLOCKD_WARM_UP:-" + WARM_UP_DEFAULT + "}",
      description = "Scratch leases run through this replica's own lock service, on a loopback port, before it "
          + "opens its port, so that the first holders it serves run compiled code; 0 for none "
          + "(default ${DEFAULT-VALUE}).")
  int warmUp;

  @Option(names = "--shutdown-grace", defaultValue = "${env:REDLOCKD_SHUTDOWN_GRACE:-10s}",
      converter = DurationFlag.class,
      description = "On SIGTERM, how long calls under way may take to finish (default ${DEFAULT-VALUE}).")
  Duration shutdownGrace;

  /**
   * Parses flags as the command line would (environment variables included), for embedding
   * and tests; throws IllegalArgumentException with a one-line reason on a bad flag.
   */
  public static ServerConfig parse(String... args) {
    ServerConfig config = new ServerConfig();
    try {
      commandLine(config).parseArgs(args);
      config.engineConfig();
      config.startMode();
    } catch (CommandLine.ParameterException | IllegalArgumentException e) {
      throw new IllegalArgumentException(explain(e, List.of(args), System.getenv()), e);
    }
    return config;
  }

  /**
   * The picocli command for these flags (or for a command that mixes them in), with number
   * converters whose errors read as reasons.
   */
  static CommandLine commandLine(Object command) {
    CommandLine cli = new CommandLine(command);
    CommandLine.ITypeConverter<Integer> wholeNumber = text -> {
      try {
        return Integer.parseInt(text.strip());
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException("'" + text + "' is not a whole number");
      }
    };
    cli.registerConverter(int.class, wholeNumber);
    cli.registerConverter(Integer.class, wholeNumber);
    CommandLine.ITypeConverter<Double> number = text -> {
      try {
        return Double.parseDouble(text.strip());
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException("'" + text + "' is not a number");
      }
    };
    cli.registerConverter(double.class, number);
    cli.registerConverter(Double.class, number);
    return cli;
  }

  /**
   * The one-line reason for a start-up error, in terms of where the bad value came from: a flag
   * the command line did not give but its environment variable set is named by the variable
   * ({@code REDLOCKD_PORT=abc: not a whole number}), so that the operator looks in the right place.
   */
  static String explain(RuntimeException e, List<String> args, Map<String, String> env) {
    if (e instanceof CommandLine.ParameterException pe && pe.getArgSpec() instanceof OptionSpec option
        && pe.getValue() != null && pe.getCause() instanceof CommandLine.TypeConversionException cause) {
      String flag = option.longestName();
      String value = pe.getValue();
      String reason = cause.getMessage();
      String quoted = "'" + value + "' is ";
      if (reason != null && reason.startsWith(quoted)) {
        reason = reason.substring(quoted.length());
      }
      String variable = fromEnvironment(flag, args, env);
      return variable != null ? variable + "=" + value + ": " + reason : flag + " " + value + ": " + reason;
    }
    String message = String.valueOf(e.getMessage());
    // Only a flag's first mention is the culprit; later ones are advice ("give --redis ...").
    Matcher m = FLAG.matcher(message);
    StringBuilder out = new StringBuilder();
    Set<String> seen = new HashSet<>();
    while (m.find()) {
      String variable = seen.add(m.group()) ? fromEnvironment(m.group(), args, env) : null;
      m.appendReplacement(out, Matcher.quoteReplacement(variable != null ? variable : m.group()));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** The variable {@code flag}'s value came from, or null when it came from the command line or a default. */
  private static String fromEnvironment(String flag, List<String> args, Map<String, String> env) {
    String variable = VARIABLES.get(flag);
    if (variable == null || !env.containsKey(variable)) {
      return null;
    }
    boolean onCommandLine = args.stream().anyMatch(a -> a.equals(flag) || a.startsWith(flag + "="));
    return onCommandLine ? null : variable;
  }

  /** Each flag's environment variable, from its {@code ${env:...}} default. */
  private static final Map<String, String> VARIABLES = variables();

  private static Map<String, String> variables() {
    Map<String, String> variables = new HashMap<>();
    for (java.lang.reflect.Field field : ServerConfig.class.getDeclaredFields()) {
      Option option = field.getAnnotation(Option.class);
      if (option != null) {
        variable(option.defaultValue()).ifPresent(v -> variables.put(option.names()[0], v));
      }
    }
    return Map.copyOf(variables);
  }

  /** The environment variable of a raw {@code ${env:NAME:-default}} default value. */
  static Optional<String> variable(String rawDefault) {
    Matcher m = ENV_DEFAULT.matcher(rawDefault == null ? "" : rawDefault);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /** The default of a raw {@code ${env:NAME:-default}} default value, used when NAME is not set. */
  static Optional<String> fallback(String rawDefault) {
    Matcher m = ENV_DEFAULT.matcher(rawDefault == null ? "" : rawDefault);
    return m.matches() ? Optional.of(m.group(2)) : Optional.empty();
  }

  /**
   * The admission bound: the node timeout unless set; zero is off. Half of it refused Acquire
   * calls of a healthy server under plain contention (two servers, 32 clients on a few locks,
   * rounds 30 ms late on average), while 10,000 KeepAlive streams opened at 2,000 a second on
   * a quiet machine never brought the rounds near it (docs/keepalive.md).
   */
  public Duration admissionBound() {
    String value = admissionLatency == null ? "auto" : admissionLatency.trim();
    if (value.isEmpty() || value.equalsIgnoreCase("auto")) {
      return nodeTimeout;
    }
    if (value.equals("0")) {
      return Duration.ZERO;
    }
    try {
      return DurationFlag.parse(value);
    } catch (CommandLine.TypeConversionException e) {
      throw new IllegalArgumentException("--admission-latency must be a duration (e.g. 25ms), 0 (off) or auto, not '"
          + value + "'");
    }
  }

  /** Checks what picocli cannot; throws IllegalArgumentException with a one-line reason. */
  EngineConfig engineConfig() {
    bindAddress();
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("--port must lie in 0..65535, not " + port);
    }
    if (metricsPort < 0 || metricsPort > 65535) {
      throw new IllegalArgumentException("--metrics-port must lie in 0..65535 (0 = off), not " + metricsPort);
    }
    if (metricsPort != 0 && metricsPort == port) {
      throw new IllegalArgumentException("--metrics-port must differ from --port (both " + port + ")");
    }
    if (nodeTimeout.isZero()) {
      throw new IllegalArgumentException("--node-timeout must be positive");
    }
    admissionBound();
    if (ioThreads < 0) {
      throw new IllegalArgumentException("--io-threads must not be negative (0: one per core)");
    }
    boolean anyTlsNode = nodeLists().nodes().stream().anyMatch(NodeAddress::tls);
    if (redisTls().isPresent() && !anyTlsNode) {
      // Most likely a node meant as rediss:// was written redis://: its traffic would go in clear.
      throw new IllegalArgumentException("--redis-tls-ca/--redis-tls-cert are set but no --redis node "
          + "uses rediss://");
    }
    grpcCredentials(); // a missing key or an unusable PEM file stops start-up here, not at the first handshake
    if (file(tokens).isPresent() && file(tlsCert).isEmpty() && !allowPlaintextTokens
        && !bindAddress().isLoopbackAddress()) {
      throw new IllegalArgumentException("--tokens without --tls-cert would send bearer tokens in clear to --bind "
          + InetAddresses.toAddrString(bindAddress()) + ": serve TLS (--tls-cert, --tls-key), bind a loopback "
          + "address (--bind 127.0.0.1), or accept it with --allow-plaintext-tokens");
    }
    if (maxStreams < 0) {
      throw new IllegalArgumentException("--max-streams must not be negative");
    }
    if (warmUp < 0) {
      throw new IllegalArgumentException("--warm-up must not be negative (0: none)");
    }
    if (keepAliveTime.isZero() || keepAliveTimeout.isZero()) {
      throw new IllegalArgumentException("--keepalive-time and --keepalive-timeout must be positive");
    }
    if (permitKeepAliveTime.isZero()) {
      throw new IllegalArgumentException("--permit-keepalive-time must be positive");
    }
    if (file(tokens).isPresent() && file(policy).isEmpty()) {
      throw new IllegalArgumentException("--tokens needs --policy: without a policy every caller is let in");
    }
    if (releaseOnDisconnect) {
      throw new IllegalArgumentException("--release-on-disconnect (REDLOCKD_RELEASE_ON_DISCONNECT) was removed: "
          + "a client cut off by a partition looks exactly like one that is gone, so releasing its lease let "
          + "another holder in while it still believed it held; a lease now ends only by its holder's release, "
          + "ForceRelease, or its ttl. Remove the flag");
    }
    if (devNodes < 1) {
      throw new IllegalArgumentException("--dev-nodes must be at least 1");
    }
    resolvedNodesPerResource();
    try {
      return new EngineConfig(keyPrefix, driftFactor, minTtl, maxTtl, retryDelay, maxWaitingAcquires,
          Duration.ofMillis(500), thriftyRounds);
    } catch (IllegalArgumentException e) {
      // The engine names its settings without the dashes ("drift-factor must ...").
      throw new IllegalArgumentException("--" + e.getMessage(), e);
    }
  }

  /**
   * --nodes-per-resource resolved against the number of nodes (--redis's, or --dev-nodes);
   * throws IllegalArgumentException with a one-line reason naming the flag.
   */
  int resolvedNodesPerResource() {
    int nodeCount = redis == null || redis.isBlank() ? devNodes : nodeLists().old().size();
    try {
      nodeLists().next().ifPresent(next -> {
        try {
          LockEngine.nodesPerResource(next.size(), nodesPerResource);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(e.getMessage() + " (for --redis-next's " + next.size() + " nodes)", e);
        }
      });
      return LockEngine.nodesPerResource(nodeCount, nodesPerResource);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage()
          + (redis == null || redis.isBlank() ? " (--dev-nodes " + devNodes + ")" : ""), e);
    }
  }

  /**
   * The nodes of --redis and --redis-next, parsed (--redis's alone, empty, when --redis is);
   * throws IllegalArgumentException with a one-line reason naming the flag.
   */
  NodeLists nodeLists() {
    if (redis == null || redis.isBlank()) {
      if (redisNext != null && !redisNext.isBlank()) {
        throw new IllegalArgumentException("--redis-next needs --redis: it is the list a membership change goes to");
      }
      return new NodeLists(List.of(), List.of(), java.util.Optional.empty());
    }
    return NodeLists.parse(redis, redisNext);
  }

  /**
   * The --redis nodes, parsed (empty when --redis is); throws IllegalArgumentException with a
   * one-line reason naming --redis for a malformed one.
   */
  List<NodeAddress> redisNodes() {
    if (redis == null || redis.isBlank()) {
      return List.of();
    }
    try {
      return NodeAddress.parseList(redis);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--redis: " + e.getMessage(), e); // never shows a password
    }
  }

  /**
   * Dev mode only when asked for: an empty --redis (a shell variable that was not set) must not
   * start a server over throwaway local nodes in production.
   */
  void startMode() {
    boolean noRedis = redis == null || redis.isBlank();
    if (dev && !noRedis) {
      throw new IllegalArgumentException("--dev and --redis exclude each other: dev mode starts its own local "
          + "Redis nodes");
    }
    if (!dev && noRedis) {
      throw new IllegalArgumentException("--redis is empty or not given: give --redis redis://host:port,... "
          + "(the Redis masters), or --dev for dev mode with local Redis nodes");
    }
  }

  /**
   * The --bind address; a literal IP, so that start-up never waits on a name lookup. Not given:
   * every interface, except in dev mode, which serves on this machine only: its access control is
   * open, and a laptop on a shared network would serve a lock service to anyone there.
   */
  public InetAddress bindAddress() {
    if (bind == null || bind.isBlank()) {
      return InetAddresses.forString(dev ? "127.0.0.1" : "0.0.0.0");
    }
    if (!InetAddresses.isInetAddress(bind)) {
      throw new IllegalArgumentException("--bind must be an IP address such as 0.0.0.0, 127.0.0.1 or ::, not '"
          + bind + "'");
    }
    return InetAddresses.forString(bind);
  }

  /** Plaintext, TLS or mutual TLS for the gRPC port, from the --tls-* flags; checks the files. */
  ServerCredentials grpcCredentials() {
    return ServerTls.credentials(file(tlsCert), file(tlsKey), file(tlsClientCa));
  }

  String grpcSecurity() {
    return ServerTls.describe(file(tlsCert), file(tlsClientCa));
  }

  /**
   * The access rules from --policy and --tokens, loaded whole; empty without --policy. Throws
   * IllegalArgumentException with a one-line reason naming the file.
   */
  Optional<AccessControl> accessControl() {
    Optional<Path> policyFile = file(policy);
    if (policyFile.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(AccessControl.load(policyFile.get(), file(tokens).orElse(null)));
    } catch (PolicyException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** For rediss:// nodes, from the --redis-tls-* flags; empty: the JVM's defaults. */
  Optional<SSLContext> redisTls() {
    return RedisTls.context(file(redisTlsCa), file(redisTlsCert), file(redisTlsKey));
  }

  /** The I/O threads to start: the flag, or one per core. */
  int ioThreadCount() {
    return ioThreads > 0 ? ioThreads : Runtime.getRuntime().availableProcessors();
  }

  /** An unset flag and an empty environment variable both mean no file. */
  private static Optional<Path> file(String flag) {
    return flag == null || flag.isBlank() ? Optional.empty() : Optional.of(Path.of(flag));
  }

  boolean devMode() {
    return dev;
  }
}
