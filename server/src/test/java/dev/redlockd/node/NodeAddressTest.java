package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodeAddressTest {

  @Test
  void parsesUserPasswordAndTls() {
    NodeAddress a = NodeAddress.parse("rediss://app:s%40cret@redis.example:6380");
    assertThat(a).isEqualTo(new NodeAddress("redis.example", 6380, true, Optional.of("app"),
        Optional.of("s@cret")));
    assertThat(NodeAddress.parse("redis://h:1/0")).isEqualTo(NodeAddress.parse("redis://h:1/"))
        .isEqualTo(NodeAddress.parse("redis://h:1"));
  }

  @Test
  void anEntryMayGiveItsNodeAStableIdElseTheIdIsHostAndPort() {
    List<NodeAddress> nodes = NodeAddress.parseList("east-1=redis://:pw@10.0.0.1:6379,redis://10.0.0.2,"
        + "redis://:a=b@10.0.0.3:7000");
    assertThat(nodes).extracting(NodeAddress::id).containsExactly("east-1", "10.0.0.2:6379", "10.0.0.3:7000");
    assertThat(nodes.get(0).password()).contains("pw");
    assertThat(nodes.get(2).password()).contains("a=b"); // an '=' in a password names nothing
    assertThat(nodes.get(0)).hasToString("east-1=redis://***@10.0.0.1:6379");
    assertThat(nodes.get(1)).hasToString("redis://10.0.0.2:6379");
  }

  @Test
  void idsAreUniqueAndWellFormed() {
    assertThatThrownBy(() -> NodeAddress.parseList("a=redis://h:1,a=redis://h:2"))
        .hasMessage("node id 'a' is given twice: each node needs its own");
    assertThatThrownBy(() -> NodeAddress.parseList("h:1=redis://h:2"))
        .isInstanceOf(IllegalArgumentException.class);
    for (String bad : List.of("=redis://:secret@h:1", "bad id=redis://:secret@h:1", "a=http://:secret@h:1",
        "x".repeat(65) + "=redis://:secret@h:1")) {
      assertThatThrownBy(() -> NodeAddress.parseList(bad)).as(bad)
          .hasMessageStartingWith("a node id (before '=') is 1 to 64 letters").hasMessageNotContaining("secret");
    }
  }

  @Test
  void refusesPortsOutsideTheTcpRange() {
    assertThatThrownBy(() -> NodeAddress.parse("redis://127.0.0.1:99999"))
        .hasMessage("port 99999 is out of range 1..65535: redis://127.0.0.1:99999");
    assertThatThrownBy(() -> NodeAddress.parse("redis://h:0")).hasMessageContaining("out of range 1..65535");
  }

  @Test
  void refusesADatabaseOtherThanZeroAndQueryParameters() {
    // Pub/sub release notices are not scoped by database: another one would isolate nothing.
    assertThatThrownBy(() -> NodeAddress.parse("redis://host:6379/99"))
        .hasMessageContaining("database 0 only").hasMessageContaining("'/99'");
    assertThatThrownBy(() -> NodeAddress.parse("redis://:pw@host:6379?db=2"))
        .hasMessageContaining("no query parameters").hasMessageNotContaining("db=2").hasMessageNotContaining("pw");
    assertThatThrownBy(() -> NodeAddress.parse("redis://host:6379/?password=hunter2"))
        .hasMessageContaining("no query parameters").hasMessageNotContaining("hunter2");
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
    assertThatThrownBy(() -> NodeAddress.parseList("")).hasMessage("no Redis node given");
  }

  @Test
  void anEmptyEntryIsRefusedNotDropped() {
    assertThatThrownBy(() -> NodeAddress.parseList("redis://a:1,,redis://b:2"))
        .hasMessage("entry 2 of 3 is empty (two commas in a row, or one at an end)");
    assertThatThrownBy(() -> NodeAddress.parseList("redis://a:1,redis://b:2,"))
        .hasMessageContaining("entry 3 of 3 is empty");
    assertThat(NodeAddress.parseList("redis://a:1").stream().map(NodeAddress::name).toList())
        .isEqualTo(List.of("a:1"));
  }
}
