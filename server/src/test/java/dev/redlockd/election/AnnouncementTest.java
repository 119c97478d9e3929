package dev.redlockd.election;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class AnnouncementTest {

  @Test
  void leadersAndVacanciesSurviveTheirTextWhateverTheValueHolds() {
    for (String value : new String[] {"", "10.0.0.7:8080", "a b  c", "line\nbreak", "V 12", "L 1 2 3", "ünïcödé"}) {
      Announcement leading = Announcement.leading(new Leader(value, Long.MAX_VALUE - 3), 7);
      assertThat(Announcement.decode(leading.encode())).contains(leading);
    }
    Announcement vacant = Announcement.vacant(-2L); // a term past 2^63, as uint64
    assertThat(Announcement.decode(vacant.encode())).contains(vacant);
    assertThat(vacant.encode()).isEqualTo("V 18446744073709551614");
  }

  @Test
  void aVacancyComesAfterEveryProclaimOfItsTermAndBeforeTheNextTerm() {
    assertThat(Announcement.vacant(5).seq()).isGreaterThan(Announcement.leading(new Leader("v", 5), 1_000_000).seq());
  }

  @Test
  void anythingElseIsIgnored() {
    for (String junk : new String[] {"", "V", "V x", "L 1 2", "L x 0 v", "L 1 -1 v", "X 1 2 3", "L 1 9223372036854775807 v"}) {
      assertThat(Announcement.decode(junk)).as(junk).isEqualTo(Optional.empty());
    }
    Random random = new Random(42);
    for (int i = 0; i < 10_000; i++) {
      byte[] bytes = new byte[random.nextInt(24)];
      random.nextBytes(bytes);
      String text = (random.nextBoolean() ? "L " : "V ") + new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1);
      Announcement.decode(text).ifPresent(a -> assertThat(Announcement.decode(a.encode())).contains(a));
    }
  }
}
