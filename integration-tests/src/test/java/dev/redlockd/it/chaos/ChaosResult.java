package dev.redlockd.it.chaos;

import java.util.List;
import java.util.Map;

/** What a chaos run found and measured. */
record ChaosResult(ChaosConfig config, List<Violation> violations, Figures figures,
    Map<Nemesis.Fault, Integer> faults, Map<ClientKind, Long> grantsByKind, List<String> clientErrors,
    String markdown, int permitSections, int permitsAtOnce) {}
