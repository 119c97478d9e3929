package dev.redlockd.spring;

import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockServiceException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@code LockRegistry} over redlockd: {@link #obtain} gives the
 * {@link RedlockdLock} of a key, a {@link java.util.concurrent.locks.Lock} held by one thread of
 * this process at a time and, while held, backed by one kept lease on the resource
 * {@code prefix + key} (renewed over a KeepAlive stream for as long as the thread holds it, so
 * work may take longer than the ttl; the ttl only bounds how long a holder that died keeps it).
 *
 * <p>It behaves as {@code RedisLockRegistry} and {@code JdbcLockRegistry} do where a lease
 * allows: reentrant per thread, threads of one process queue on a local lock before they ask
 * the service, {@code unlock} from a thread that does not hold the lock throws
 * {@link IllegalMonitorStateException}, conditions are not supported. It differs where the
 * lease is stronger: the lease does not expire under a live holder (no renewal to schedule), and
 * a lost lease is reported to the {@link RedlockdLockListener} the moment the client knows
 * (not only at the next {@code unlock}); see {@link RedlockdLock}.
 *
 * <p>{@link #destroy()} (the application stopping) releases nothing a thread still holds: the
 * service keeps it until its holder unlocks, or its ttl runs out once renewals stop.
 */
public final class RedlockdLockRegistry
    implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {
  private static final Logger log = LoggerFactory.getLogger(RedlockdLockRegistry.class);

  private final LockClient client;
  private final String prefix;
  private final Duration ttl;
  /** Copy-on-write: listeners are added once, at start-up, and called on every acquisition. */
  private final List<RedlockdLockListener> listeners = new CopyOnWriteArrayList<>();
  private final RedlockdLockListener listener = new Listeners();
  private final LongSupplier nanoClock;
  /** A concurrent map: obtain is called from any thread, and the locks it holds are shared by them. */
  private final Map<String, RedlockdLock> locks = new ConcurrentHashMap<>();
  private final AtomicInteger held = new AtomicInteger();

  private RedlockdLockRegistry(Builder b) {
    this.client = b.client;
    this.prefix = b.prefix;
    this.ttl = b.ttl;
    this.listeners.addAll(b.listeners);
    this.nanoClock = b.nanoClock;
  }

  public static Builder builder(LockClient client) {
    return new Builder(client);
  }

  /**
   * The lock of {@code lockKey} (a String): the same object for the same key until
   * {@link #expireUnusedOlderThan} drops it while no thread holds it.
   */
  @Override
  public RedlockdLock obtain(Object lockKey) {
    if (!(lockKey instanceof String key)) {
      throw new IllegalArgumentException("a redlockd lock key is a String, not " + lockKey);
    }
    return locks.computeIfAbsent(key, k -> new RedlockdLock(this, k));
  }

  /**
   * Forgets the locks no thread holds that were last used more than {@code age} milliseconds
   * ago; a later {@link #obtain} makes a new one. (A lock obtained before and used after still
   * excludes every other holder: the lease does, on the service.)
   */
  @Override
  public void expireUnusedOlderThan(long age) {
    long now = nanoClock.getAsLong();
    long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
    locks.values().removeIf(lock -> !lock.isLocked() && now - lock.lastUsedNanos() >= ageNanos);
  }

  /**
   * Renews the lease of the lock the current thread holds for the registry's ttl. A held lock's
   * lease is renewed anyway, as long as it is held; this only makes it hold on for a full ttl from now.
   *
   * @throws IllegalMonitorStateException when the current thread does not hold it
   */
  @Override
  public void renewLock(Object lockKey) {
    renewLock(lockKey, ttl);
  }

  /**
   * Changes the ttl of the lease of the lock the current thread holds (through its KeepAlive
   * stream: the renewals that follow use it too).
   *
   * @throws IllegalMonitorStateException when the current thread does not hold it
   * @throws RedlockdLockLostException when its lease was lost
   */
  @Override
  public void renewLock(Object lockKey, Duration newTtl) {
    obtain(lockKey).extend(newTtl);
  }

  /** Tells {@code listener} too of acquisitions, releases and losses from now on. */
  public void addListener(RedlockdLockListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** How many locks threads of this process hold now (each with one kept lease). */
  public int heldLocks() {
    return held.get();
  }

  /** The ttl of the leases of {@link RedlockdLock#lock()} and {@code tryLock}. */
  public Duration ttl() {
    return ttl;
  }

  /** Called when the application stops: logs the locks still held (their leases run out by themselves). */
  public void destroy() {
    locks.values().stream().filter(RedlockdLock::isLocked).forEach(lock -> log.warn(
        "lock '{}' is still held as the application stops: its lease runs out within its ttl once the "
            + "renewals stop, and no one else can take it before", lock.key()));
  }

  LockClient client() {
    return client;
  }

  String resource(String key) {
    return prefix + key;
  }

  RedlockdLockListener listener() {
    return listener;
  }

  long nanoTime() {
    return nanoClock.getAsLong();
  }

  Duration since(long startNanos) {
    return Duration.ofNanos(nanoClock.getAsLong() - startNanos);
  }

  void heldChanged(int delta) {
    held.addAndGet(delta);
  }

  void releaseFailed(String key, LockServiceException e) {
    log.warn("lock '{}' was unlocked but its lease could not be given back ({}): it runs out within its ttl",
        key, e.getMessage());
  }

  /** Every listener, each shielded from the others' failures (a listener never breaks a lock). */
  private final class Listeners implements RedlockdLockListener {
    @Override
    public void acquired(String lockKey, Duration waited) {
      each(l -> l.acquired(lockKey, waited));
    }

    @Override
    public void notAcquired(String lockKey, Duration waited) {
      each(l -> l.notAcquired(lockKey, waited));
    }

    @Override
    public void failed(String lockKey, Duration waited, Throwable cause) {
      each(l -> l.failed(lockKey, waited, cause));
    }

    @Override
    public void released(String lockKey) {
      each(l -> l.released(lockKey));
    }

    @Override
    public void lost(String lockKey, RedlockdLockLostException lost) {
      each(l -> l.lost(lockKey, lost));
    }

    private void each(Consumer<RedlockdLockListener> call) {
      for (RedlockdLockListener l : listeners) {
        try {
          call.accept(l);
        } catch (RuntimeException e) {
          log.warn("a lock listener failed: {}", e.toString());
        }
      }
    }
  }

  @Override
  public String toString() {
    return "RedlockdLockRegistry[prefix=" + prefix + ", ttl=" + ttl.toMillis() + "ms]";
  }

  /** Options; every one but the client has a default. */
  public static final class Builder {
    private final LockClient client;
    private String prefix = "";
    private Duration ttl = Duration.ofSeconds(30);
    private final List<RedlockdLockListener> listeners = new ArrayList<>();
    private LongSupplier nanoClock = System::nanoTime;

    private Builder(LockClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /** Put before each key to name its resource, e.g. {@code "orders-service/"} (default: none). */
    public Builder prefix(String prefix) {
      this.prefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /**
     * The leases' ttl (default 30 s): how long a lock stays taken after its holding process
     * died or lost touch with the service. The lease is renewed every ttl/4 while held.
     */
    public Builder ttl(Duration ttl) {
      if (ttl.isNegative() || ttl.isZero()) {
        throw new IllegalArgumentException("ttl must be positive, was " + ttl);
      }
      this.ttl = ttl;
      return this;
    }

    /** Told of acquisitions, releases and losses (meters, logs, application events); may be given several times. */
    public Builder listener(RedlockdLockListener listener) {
      this.listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    Builder nanoClock(LongSupplier clock) {
      this.nanoClock = clock;
      return this;
    }

    public RedlockdLockRegistry build() {
      return new RedlockdLockRegistry(this);
    }
  }
}
