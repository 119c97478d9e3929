package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IdentityPatternTest {
  @Test
  void exactMatchesOnlyItself() {
    IdentityPattern p = new IdentityPattern("spiffe://corp/team-a/api");
    assertThat(p.matches("spiffe://corp/team-a/api")).isTrue();
    assertThat(p.matches("spiffe://corp/team-a/api2")).isFalse();
  }

  @Test
  void trailingStarMatchesThePrefix() {
    IdentityPattern p = new IdentityPattern("spiffe://corp/team-a/*");
    assertThat(p.matches("spiffe://corp/team-a/api")).isTrue();
    assertThat(p.matches("spiffe://corp/team-b/api")).isFalse();
    assertThat(new IdentityPattern("*").matches("anyone")).isTrue();
  }

  @Test
  void starAnywhereElseIsRefused() {
    assertThatThrownBy(() -> new IdentityPattern("spiffe://*/api")).hasMessageContaining("'*'");
    assertThatThrownBy(() -> new IdentityPattern("**")).hasMessageContaining("'*'");
  }
}
