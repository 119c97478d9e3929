package dev.redlockd.it.conformance;

import dev.redlockd.testing.ServerProcess;
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
  /** lost-answer's server, the lane's own, so that its metrics count this runner's calls alone. */
  ServerProcess patient;
  int patientMetricsPort;
  /** How long the harness waited for the runner's client to reach a replica before stopping another. */
  long waitedForConnections;

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
