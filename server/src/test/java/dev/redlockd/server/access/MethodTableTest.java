package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.MethodDescriptor;
import org.junit.jupiter.api.Test;

class MethodTableTest {
  @Test
  void everyLockServiceMethodHasARule() {
    for (var method : LockServiceGrpc.getServiceDescriptor().getMethods()) {
      assertThat(MethodTable.forMethod(method.getFullMethodName())).as(method.getFullMethodName()).isPresent();
    }
  }

  @Test
  void rulesReadTheResourceFromTheRequest() {
    var keepAlive = MethodTable.forMethod(LockServiceGrpc.getKeepAliveMethod().getFullMethodName()).orElseThrow();
    assertThat(keepAlive.permission()).isEqualTo(Permission.LOCK);
    assertThat(keepAlive.rpc()).isEqualTo("KeepAlive");
    assertThat(keepAlive.resource().apply(KeepAliveRequest.newBuilder().setResource("team-a/x").build()))
        .isEqualTo("team-a/x");
    var force = MethodTable.forMethod("redlock.v1.LockService/ForceRelease").orElseThrow();
    assertThat(force.permission()).isEqualTo(Permission.FORCE_RELEASE);
    assertThat(force.resource().apply(ForceReleaseRequest.newBuilder().setResource("r").build())).isEqualTo("r");
    var campaign = MethodTable.forMethod("redlock.v1.ElectionService/Campaign").orElseThrow();
    assertThat(campaign.resource().apply(CampaignRequest.newBuilder().setElection("e").build())).isEqualTo("e");
    assertThat(campaign.permission()).isEqualTo(Permission.CAMPAIGN);
    assertThat(MethodTable.forMethod("redlock.v1.ElectionService/Observe").orElseThrow().permission())
        .isEqualTo(Permission.OBSERVE);
    assertThat(MethodTable.forMethod("redlock.v1.ElectionService/Leader").orElseThrow().permission())
        .isEqualTo(Permission.OBSERVE);
  }

  @Test
  void otherServicesAreNotGoverned() {
    assertThat(MethodTable.forMethod("grpc.health.v1.Health/Check")).isEmpty();
    assertThat(MethodTable.forMethod(MethodDescriptor.generateFullMethodName("x.Y", "Z"))).isEmpty();
  }
}
