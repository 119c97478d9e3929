package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OwnerTextTest {
  @Test
  void withoutAnIdentityTheOwnerTextIsStoredAsItWasBefore() {
    assertThat(OwnerText.store("worker 7", "")).isEqualTo("worker 7");
    assertThat(OwnerText.store("", "")).isEmpty();
    assertThat(OwnerText.parse("worker 7")).isEqualTo(new OwnerText.Parsed("", "worker 7"));
    assertThat(OwnerText.parse("")).isEqualTo(new OwnerText.Parsed("", ""));
  }

  @Test
  void anIdentityRoundTripsBesideAnyOwnerText() {
    for (String owner : new String[] {"", "worker 7", "line\\nbreak", "\u001e", "\u001eteam-a\u001efake", "x\u001ey"}) {
      for (String holder : new String[] {"", "team-a", "spiffe://example.org/ns/a/sa/b"}) {
        assertThat(OwnerText.parse(OwnerText.store(owner, holder))).as("%s / %s", owner, holder)
            .isEqualTo(new OwnerText.Parsed(holder, owner));
      }
    }
  }

  @Test
  void anOwnerTextCannotPassItselfOffAsAnIdentity() {
    String forged = "\u001eteam-a\u001eworker 8";
    assertThat(OwnerText.parse(OwnerText.store(forged, "")).holder()).isEmpty();
  }

  @Test
  void anIdentityCannotEndItsOwnPart() {
    OwnerText.Parsed p = OwnerText.parse(OwnerText.store("owner", "a\u001eb"));
    assertThat(p.owner()).isEqualTo("owner");
    assertThat(p.holder()).doesNotContain("\u001e").startsWith("a").endsWith("b");
  }
}
