package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a replica with no history of a node concludes from the clocks others recorded on the nodes. */
class ClockRecordsTest {
  private static final double DRIFT = 0.01;
  private static final long TOLERANCE = NodeClock.TOLERANCE_NANOS;
  /** Clocks that never agreed with each other: only their advances are compared. */
  private static final long[] START = {1_800_000_000_000_000L, 1_800_000_123_456_789L, 1_799_999_000_000_000L,
      1_800_000_000_500_000L, 1_800_003_600_000_000L};

  private static Map<String, ClockRecords.Reading> readings(long afterMicros, long... steps) {
    Map<String, ClockRecords.Reading> readings = new LinkedHashMap<>();
    for (int i = 0; i < START.length; i++) {
      long step = i < steps.length ? steps[i] : 0;
      readings.put("n" + i, new ClockRecords.Reading("n" + i, START[i] + afterMicros + step, 100));
    }
    return readings;
  }

  @Test
  void aRecordReadsBackAsWritten() {
    Map<String, ClockRecords.Reading> then = readings(0);
    assertThat(ClockRecords.parse(ClockRecords.format(List.copyOf(then.values())))).isEqualTo(then);
    assertThat(ClockRecords.parse("")).isEmpty();
    assertThat(ClockRecords.parse("n0:12:x n1:4:5")).as("another shape reads as no record").isEmpty();
  }

  @Test
  void aNodeThatAdvancedMoreThanMostOthersByMoreThanRatesAllowStepped() {
    List<Map<String, ClockRecords.Reading>> records = List.of(readings(0));
    Map<String, ClockRecords.Reading> now = readings(10_000_000, 0, 0, 0, 0, 30_000_000);
    ClockRecords.Vetting e = ClockRecords.vet("n4", now, records, DRIFT, TOLERANCE);
    assertThat(e.outcome()).isEqualTo(ClockRecords.Outcome.STEPPED);
    assertThat(e.stepNanos()).isEqualTo(30_000_000_000L);
    assertThat(e.ageNanos()).isEqualTo(10_000_000_000L);
    for (String other : List.of("n0", "n1", "n2", "n3")) {
      assertThat(ClockRecords.vet(other, now, records, DRIFT, TOLERANCE).outcome()).as(other)
          .isEqualTo(ClockRecords.Outcome.CONSISTENT);
    }
    Map<String, ClockRecords.Reading> back = readings(10_000_000, 0, -30_000_000);
    assertThat(ClockRecords.vet("n1", back, records, DRIFT, TOLERANCE).stepNanos()).isEqualTo(-30_000_000_000L);
  }

  @Test
  void advancesThatDifferByNoMoreThanRatesWithinTheDriftFactorAllowAreNoStep() {
    // Ten seconds later, one clock 1 % slow and one 1 % fast: 200 ms apart, all of it rate.
    Map<String, ClockRecords.Reading> now = readings(10_000_000, -99_000, 0, 0, 0, 99_000);
    for (String node : now.keySet()) {
      assertThat(ClockRecords.vet(node, now, List.of(readings(0)), DRIFT, TOLERANCE).outcome()).as(node)
          .isEqualTo(ClockRecords.Outcome.CONSISTENT);
    }
  }

  @Test
  void theFreshestRecordThatHoldsTheNodeIsTheOneItIsJudgedBy() {
    Map<String, ClockRecords.Reading> old = readings(0);
    Map<String, ClockRecords.Reading> fresh = readings(9_000_000, 0, 0, 0, 0, 30_000_000); // recorded after the step
    Map<String, ClockRecords.Reading> now = readings(10_000_000, 0, 0, 0, 0, 30_000_000);
    assertThat(ClockRecords.vet("n4", now, List.of(old, fresh), DRIFT, TOLERANCE).outcome())
        .isEqualTo(ClockRecords.Outcome.CONSISTENT);
  }

  @Test
  void withoutARecordOrAnotherNodeToCompareWithNothingCanBeSaid() {
    Map<String, ClockRecords.Reading> now = readings(10_000_000);
    assertThat(ClockRecords.vet("n0", now, List.of(), DRIFT, TOLERANCE).outcome())
        .isEqualTo(ClockRecords.Outcome.NO_RECORD);
    Map<String, ClockRecords.Reading> alone = Map.of("n0", readings(0).get("n0"));
    assertThat(ClockRecords.vet("n0", now, List.of(alone), DRIFT, TOLERANCE).outcome())
        .isEqualTo(ClockRecords.Outcome.NO_RECORD);
  }

  @Test
  void whenTheOthersDisagreeAmongThemselvesTheNodeIsNeitherPassedNorQuarantined() {
    Map<String, ClockRecords.Reading> then = new LinkedHashMap<>(readings(0));
    then.keySet().retainAll(List.of("n0", "n1", "n2"));
    Map<String, ClockRecords.Reading> now = readings(10_000_000, 0, 30_000_000);
    assertThat(ClockRecords.vet("n0", now, List.of(then), DRIFT, TOLERANCE).outcome())
        .isEqualTo(ClockRecords.Outcome.UNDECIDED);
  }
}
