package dev.redlockd.it.conformance;

import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * One language's runner in one scenario, in a thread of its own beside the other languages'
 * lanes: its own resource (and election) of that name, and what it shares with them, which
 * is the scenario's schedule of faults, its replicas, and the tokens the harness read from
 * Redis (none may appear in any runner's output).
 */
final class Lane {
  final Language language;
  final String scenario;
  final String resource;
  final Schedule schedule;
  /** The scenario's replicas, or null when the lanes share the conformance server. */
  final ReplicaSet replicas;
  final Set<String> tokens;
  /** Set when the lane starts its runner. */
  RunnerProcess runner;
  /** The scenario's belief oracle (shared by its lanes), set when the lane starts: nodes are frozen through it. */
  BeliefOracle oracle;
  /** lost-answer's server, the lane's own, so that its metrics count this runner's calls alone. */
  ServerProcess patient;
  int patientMetricsPort;
  /** How long the harness waited for the runner's client to reach a replica before stopping another. */
  long waitedForConnections;
  /** How long replica-restart waited for the replica left up to answer promptly (ConformanceTest#awaitPrompt). */
  long waitedForPrompt;

  Lane(Language language, String scenario, Schedule schedule, ReplicaSet replicas, Set<String> tokens) {
    this.language = language;
    this.scenario = scenario;
    this.resource = "conformance/" + language.id + "/" + scenario;
    this.schedule = schedule;
    this.replicas = replicas;
    this.tokens = tokens;
  }

  /** What a failure is reported under: the language and the scenario. */
  String name() {
    return language.id + " " + scenario;
  }

  /** Where each lane's runner transcript is kept after its scenario, with the replicas' logs. */
  static Path transcripts(Path root) {
    return root.resolve("integration-tests/target/conformance/transcripts");
  }

  /** Writes the runner's whole output to {@link #transcripts}, named by language and scenario. */
  void keepTranscript(Path root) throws IOException {
    if (runner != null) {
      Files.writeString(Files.createDirectories(transcripts(root)).resolve(language.id + "-" + scenario + ".log"),
          runner.transcript());
    }
  }

  /** Stops the runner if it still runs, and the lane's own server. */
  void close() throws InterruptedException {
    try {
      if (runner != null) {
        runner.close();
      }
    } finally {
      if (patient != null) {
        patient.close();
      }
    }
  }
}
