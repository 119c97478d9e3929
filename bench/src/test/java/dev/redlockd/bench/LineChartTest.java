package dev.redlockd.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The SVG writer on sample data: well-formed XML, one line per series, a legend, labelled axes. */
class LineChartTest {
  @Test
  void aLogScaleChartIsWellFormedSvgWithOneLinePerSeriesAndLabelledAxes() throws Exception {
    String svg = new LineChart("Cycles <per> second & more", "cycles in flight", "cycles per second").logX()
        .series("redlockd", List.of(new LineChart.Point(1, 560), new LineChart.Point(32, 3641),
            new LineChart.Point(128, 4648)))
        .series("RedissonRedLock", List.of(new LineChart.Point(1, 231), new LineChart.Point(32, 740),
            new LineChart.Point(128, 952)))
        .series("etcd", List.of(new LineChart.Point(1, 480), new LineChart.Point(32, 2655)))
        .svg();

    Document doc = parse(svg);
    assertThat(doc.getDocumentElement().getTagName()).isEqualTo("svg");
    List<Element> series = byClass(doc, "g", "series");
    assertThat(series).extracting(g -> g.getAttribute("data-name")).containsExactly("redlockd", "RedissonRedLock", "etcd");
    assertThat(series).allSatisfy(g -> assertThat(g.getElementsByTagName("polyline").getLength()).isEqualTo(1));
    assertThat(series.get(2).getElementsByTagName("circle").getLength()).isEqualTo(2);
    assertThat(byClass(doc, "g", "legend")).extracting(Element::getTextContent)
        .containsExactly("redlockd", "RedissonRedLock", "etcd");
    assertThat(byClass(doc, "text", "axis-label")).extracting(Element::getTextContent)
        .containsExactly("cycles in flight (log scale)", "cycles per second");
    assertThat(texts(doc)).contains("Cycles <per> second & more");
    // Decades on the log axis, 1 to 1,000 for 1..128 in flight.
    assertThat(byClass(doc, "text", "tick")).extracting(Element::getTextContent).contains("1", "10", "100", "1,000");
  }

  @Test
  void namedPositionsReplaceNumbersOnTheXAxis() throws Exception {
    String svg = new LineChart("Hand-off", "percentile", "milliseconds").logY()
        .xTicks(List.of(new LineChart.Tick(1, "p50"), new LineChart.Tick(2, "p99"), new LineChart.Tick(3, "max")))
        .series("one server", List.of(new LineChart.Point(1, 1.3), new LineChart.Point(2, 4.94),
            new LineChart.Point(3, 8.71)))
        .svg();
    Document doc = parse(svg);
    assertThat(byClass(doc, "text", "tick")).extracting(Element::getTextContent).contains("p50", "p99", "max", "1", "10");
    assertThat(byClass(doc, "text", "axis-label")).extracting(Element::getTextContent)
        .containsExactly("percentile", "milliseconds (log scale)");
  }

  @Test
  void pointsALogAxisCannotShowAreLeftOutAndNoDataIsAnError() {
    LineChart chart = new LineChart("t", "x", "y").logX().series("zero", List.of(new LineChart.Point(0, 1)));
    assertThat(chart.series()).isEmpty();
    assertThatThrownBy(chart::svg).hasMessageContaining("no data");
  }

  private static Document parse(String svg) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
  }

  private static List<Element> byClass(Document doc, String tag, String cls) {
    List<Element> out = new ArrayList<>();
    NodeList nodes = doc.getElementsByTagName(tag);
    for (int i = 0; i < nodes.getLength(); i++) {
      Element e = (Element) nodes.item(i);
      if (e.getAttribute("class").equals(cls)) {
        out.add(e);
      }
    }
    return out;
  }

  private static List<String> texts(Document doc) {
    List<String> out = new ArrayList<>();
    NodeList nodes = doc.getElementsByTagName("text");
    for (int i = 0; i < nodes.getLength(); i++) {
      out.add(nodes.item(i).getTextContent());
    }
    return out;
  }
}
