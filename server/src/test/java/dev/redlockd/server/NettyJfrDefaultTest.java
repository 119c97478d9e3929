package dev.redlockd.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Netty's JFR events are off at start unless the operator's flag says otherwise (Main's comment: start-up CPU). */
class NettyJfrDefaultTest {
  private String before;

  @BeforeEach
  void save() {
    before = System.getProperty(Main.NETTY_JFR);
  }

  @AfterEach
  void restore() {
    if (before == null) {
      System.clearProperty(Main.NETTY_JFR);
    } else {
      System.setProperty(Main.NETTY_JFR, before);
    }
  }

  @Test
  void offWhenNobodyAsked() {
    System.clearProperty(Main.NETTY_JFR);
    Main.nettyJfrOffUnlessAsked();
    assertThat(System.getProperty(Main.NETTY_JFR)).isEqualTo("false");
  }

  @Test
  void anOperatorsFlagWins() {
    System.setProperty(Main.NETTY_JFR, "true");
    Main.nettyJfrOffUnlessAsked();
    assertThat(System.getProperty(Main.NETTY_JFR)).isEqualTo("true");
  }
}
