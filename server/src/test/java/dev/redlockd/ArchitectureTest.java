package dev.redlockd;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The arrows between the server's parts point one way: server -> election -> engine -> node, with
 * the gRPC adapters (server.rpc) using access control (server.access) and never the reverse. The
 * engine knows nothing of gRPC or of Netty's server side; access control sees of the engine only
 * what the engine offers everyone.
 */
class ArchitectureTest {
  private static final JavaClasses MAIN = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("dev.redlockd");

  /** What the engine offers its users; everything else in dev.redlockd.engine is its own business. */
  private static final Set<String> ENGINE_API = Set.of(
      "Grant", "LockEngine", "LockToken", "LockDescription", "EngineConfig", "KeptLease", "NodeState",
      "LockEngineException", "InvalidRequestException", "LeaseNotHeldException", "LimitExceededException",
      "LockHeldException", "QuorumUnavailableException", "LeaseRequest", "AcquireObserver", "NameDescription",
      "SemaphoreDescription");
  /** The engine's calls that carry a lease's policy: the access layer's LeaseDesk makes them for the adapter. */
  private static final Set<String> LEASE_CALLS = Set.of("acquire", "acquirePermit", "extend", "release", "describe",
      "describeSemaphore");

  @Test
  void theNodeClientKnowsNothingAboveIt() {
    noClasses().that().resideInAPackage("dev.redlockd.node..")
        .should().dependOnClassesThat().resideInAnyPackage(
            "dev.redlockd.engine..", "dev.redlockd.election..", "dev.redlockd.server..")
        .check(MAIN);
  }

  @Test
  void theEngineKnowsNothingOfElectionsOrTheServer() {
    noClasses().that().resideInAPackage("dev.redlockd.engine..")
        .should().dependOnClassesThat().resideInAnyPackage("dev.redlockd.election..", "dev.redlockd.server..")
        .check(MAIN);
  }

  @Test
  void theEngineIsFreeOfGrpcAndNettyServerTypes() {
    noClasses().that().resideInAPackage("dev.redlockd.engine..")
        .should().dependOnClassesThat().resideInAnyPackage(
            "io.grpc..", "io.netty.handler.codec.http2..", "io.netty.bootstrap..", "dev.redlockd.proto..")
        .check(MAIN);
  }

  @Test
  void electionsKnowNothingOfTheServer() {
    noClasses().that().resideInAPackage("dev.redlockd.election..")
        .should().dependOnClassesThat().resideInAnyPackage("dev.redlockd.server..", "io.grpc..")
        .check(MAIN);
  }

  @Test
  void accessControlDoesNotReachIntoTheAdaptersOrTheEngineInternals() {
    noClasses().that().resideInAPackage("dev.redlockd.server.access..")
        .should().dependOnClassesThat().resideInAnyPackage("dev.redlockd.server.rpc..")
        .check(MAIN);
    noClasses().that().resideInAPackage("dev.redlockd.server.access..")
        .should().dependOnClassesThat(engineInternals())
        .check(MAIN);
  }

  /**
   * The lock service's adapter maps messages and statuses, nothing more: a caller's shares, the
   * give-back of a grant that can no longer reach its caller, and the choice between a lock and a
   * semaphore belong to the access layer (LeaseDesk) and the engine (describeName).
   */
  @Test
  void theLockServiceAdapterOnlyAdapts() {
    noClasses().that().haveSimpleName("LockServiceAdapter")
        .should().dependOnClassesThat().haveSimpleName("Shares")
        .orShould().callMethodWhere(new DescribedPredicate<JavaMethodCall>("is LockEngine." + LEASE_CALLS) {
          @Override
          public boolean test(JavaMethodCall call) {
            return call.getTargetOwner().getSimpleName().equals("LockEngine") && LEASE_CALLS.contains(call.getName());
          }
        })
        .check(MAIN);
  }

  @Test
  void theServerPackagesHaveNoCycles() {
    slices().matching("dev.redlockd.(*)..").should().beFreeOfCycles().check(MAIN);
    slices().matching("dev.redlockd.server.(*)..").should().beFreeOfCycles().check(MAIN);
  }

  private static DescribedPredicate<JavaClass> engineInternals() {
    return new DescribedPredicate<>("are engine internals (not " + ENGINE_API + ")") {
      @Override
      public boolean test(JavaClass c) {
        if (!c.getPackageName().equals("dev.redlockd.engine")) {
          return false;
        }
        String top = c.getName().substring("dev.redlockd.engine.".length()).split("\\$")[0];
        return !ENGINE_API.contains(top);
      }
    };
  }
}
