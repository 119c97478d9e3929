package dev.redlockd.it.election;

import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.keepalive.StreamProbe;
import dev.redlockd.it.support.Resend;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.Replicas;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rule 1 at a replica's end: a replica that is stopped (SIGTERM) or dies (SIGKILL) releases
 * nothing, so no competitor waiting through another replica gets a lease or a leadership that
 * its holder still believes in; the holder resumes both through the other replica with the
 * same fencing token and term.
 */
class ReplicaShutdownResumeTest {
  private static final Duration TTL = Duration.ofSeconds(4);
  private static final String LEASE_TOKEN = "replica-lease-token-aaaaaaaaaaaaaaaaaaa";
  private static final String CANDIDATE_TOKEN = "replica-candidate-token-bbbbbbbbbbbbbbb";

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"SIGTERM", "SIGKILL"})
  void theHolderResumesOnTheOtherReplicaAndNoCompetitorIsGrantedMeanwhile(String signal) throws Exception {
    try (Replicas replicas = Replicas.start(3, 2)) {
      ServerProcess going = replicas.server(0);
      ServerProcess staying = replicas.server(1);
      String resource = "replica-end/" + signal;
      LockServiceGrpc.LockServiceBlockingStub viaGoing = LockServiceGrpc.newBlockingStub(going.channel());
      Lease lease = viaGoing.acquire(AcquireRequest.newBuilder().setResource(resource).setTtl(proto(TTL))
          .setToken(LEASE_TOKEN).build()).getLease();
      StreamProbe kept = StreamProbe.open(LockServiceGrpc.newStub(going.channel()));
      kept.send(resource, LEASE_TOKEN, TTL, 1);
      kept.next(Duration.ofSeconds(5));
      Candidate leader = new Candidate(going.channel(), "leader", resource, "a", TTL, CANDIDATE_TOKEN, false);
      long term = leader.leading.get(5, TimeUnit.SECONDS).getTerm();
      // Competitors wait through the replica that stays.
      Candidate rival = new Candidate(staying.channel(), "rival", resource, "rival", TTL);
      CompletableFuture<Lease> competitor = CompletableFuture.supplyAsync(() ->
          LockServiceGrpc.newBlockingStub(staying.channel()).withDeadlineAfter(30, TimeUnit.SECONDS)
              .acquire(AcquireRequest.newBuilder().setResource(resource).setTtl(proto(TTL))
                  .setWait(proto(Duration.ofSeconds(25))).build()).getLease());

      if (signal.equals("SIGTERM")) {
        going.sigterm();
      } else {
        going.kill();
      }
      Status keptEnd = kept.awaitEnd(Duration.ofSeconds(10));
      Status campaignEnd = leader.ended.get(10, TimeUnit.SECONDS);
      assertThat(keptEnd.getCode()).as("%s", keptEnd).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(campaignEnd.getCode()).as("%s", campaignEnd).isEqualTo(Status.Code.UNAVAILABLE);

      StreamProbe resumed = StreamProbe.open(LockServiceGrpc.newStub(staying.channel()));
      resumed.send(resource, LEASE_TOKEN, TTL, 2);
      KeepAliveResponse renewed = resumed.next(Duration.ofSeconds(5)); // resumed through the other replica
      // The holder goes on asking every ttl/4, as the clients do (a silent one would be let go).
      Resend asking = Resend.everyQuarterOf(TTL, resumed::send, sequence -> KeepAliveRequest.newBuilder()
          .setResource(resource).setToken(LEASE_TOKEN).setTtl(proto(TTL)).setSequence(sequence).build(), 3,
          resumed.end);
      assertThat(renewed.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
      assertThat(renewed.getLease().getFencingToken()).isEqualTo(lease.getFencingToken());
      Candidate back = new Candidate(staying.channel(), "leader", resource, "a2", TTL, CANDIDATE_TOKEN, true);
      assertThat(back.leading.get(5, TimeUnit.SECONDS).getTerm()).isEqualTo(term);

      // Two ttls later: renewed through the staying replica, nobody else got in.
      Thread.sleep(2 * TTL.toMillis());
      assertThat(competitor).as("a competitor granted a lease its holder kept").isNotDone();
      assertThat(rival.led()).as("a rival leading while the leader resumed").isFalse();
      assertThat(resumed.end).isNotDone();
      assertThat(back.ended).isNotDone();
      var leaderNow = ElectionServiceGrpc.newBlockingStub(staying.channel())
          .leader(LeaderRequest.newBuilder().setElection(resource).build()).getLeader();
      assertThat(leaderNow.getTerm()).isEqualTo(term);
      assertThat(leaderNow.getValue()).isEqualTo("a2");

      // Given back by their holders: the competitors get them, with higher tokens.
      asking.close();
      resumed.halfClose();
      assertThat(resumed.awaitEnd(Duration.ofSeconds(5)).getCode()).isEqualTo(Status.Code.OK);
      assertThat(competitor.get(5, TimeUnit.SECONDS).getFencingToken()).isGreaterThan(lease.getFencingToken());
      back.resign();
      assertThat(rival.leading.get(5, TimeUnit.SECONDS).getTerm()).isGreaterThan(term);
      rival.resign();
    }
  }
}
