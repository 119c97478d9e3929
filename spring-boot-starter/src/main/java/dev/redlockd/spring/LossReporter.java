package dev.redlockd.spring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;

/** Reports each lost lease the moment it is known: a WARN line and a {@link RedlockdLockLostEvent}. */
final class LossReporter implements RedlockdLockListener {
  private static final Logger log = LoggerFactory.getLogger(LossReporter.class);

  private final RedlockdLockRegistry registry;
  private final ApplicationEventPublisher events;

  LossReporter(RedlockdLockRegistry registry, ApplicationEventPublisher events) {
    this.registry = registry;
    this.events = events;
  }

  @Override
  public void lost(String lockKey, RedlockdLockLostException lost) {
    log.warn("{}; the holding thread's next call on the lock throws", lost.getMessage());
    events.publishEvent(new RedlockdLockLostEvent(registry, lost));
  }
}
