package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodeAddressTest {

  @Test
  void parsesUserPasswordDatabaseAndTls() {
    NodeAddress a = NodeAddress.parse("rediss://app:s%40cret@redis.example:6380/2");
    assertThat(a).isEqualTo(new NodeAddress("redis.example", 6380, true, Optional.of("app"),
        Optional.of("s@cret"), 2));
  }

  @Test
  void passwordOnlyFormAndDefaultPort() {
    NodeAddress a = NodeAddress.parse("redis://hunter2@localhost");
    assertThat(a.password()).contains("hunter2");
    assertThat(a.user()).isEmpty();
    assertThat(a.port()).isEqualTo(6379);
  }

  @Test
  void toStringAndErrorsNeverShowThePassword() {
    assertThat(NodeAddress.parse("redis://app:hunter2@h:1").toString()).doesNotContain("hunter2");
    assertThatThrownBy(() -> NodeAddress.parse("http://app:hunter2@h:1"))
        .hasMessageNotContaining("hunter2");
  }

  @Test
  void plusInAPasswordStaysAPlus() {
    assertThat(NodeAddress.parse("redis://app:a+b%2Fc@h:1").password()).contains("a+b/c");
  }

  @Test
  void errorsHideAPasswordWithSlashesOrAtSigns() {
    assertThatThrownBy(() -> NodeAddress.parse("redis://app:hun/ter2@h:1/notadb"))
        .hasMessageNotContaining("hun").hasMessageNotContaining("ter2");
    assertThatThrownBy(() -> NodeAddress.parse("http://app:hun@ter2@h:1"))
        .hasMessageNotContaining("hun").hasMessageNotContaining("ter2");
  }

  @Test
  void listRejectsDuplicatesAndEmptiness() {
    assertThat(NodeAddress.parseList("redis://a:1, redis://b:2")).hasSize(2);
    assertThatThrownBy(() -> NodeAddress.parseList("redis://a:1,redis://a:1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> NodeAddress.parseList(" , ")).isInstanceOf(IllegalArgumentException.class);
    assertThat(NodeAddress.parseList("redis://a:1").stream().map(NodeAddress::name).toList())
        .isEqualTo(List.of("a:1"));
  }
}
