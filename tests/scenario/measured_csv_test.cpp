// The measured-CSV reader: what it accepts, and that every malformed file names file:line and the
// column.
#include "twinbench/scenario/measured_csv.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "twinbench/scenario/input_error.hpp"

namespace tb::scenario {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::string& text) {
  try {
    parse_measured_csv(text, "m.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MeasuredCsv, ReadsCommentsHeaderAndCellsWithOrWithoutSummaries) {
  const auto cells = parse_measured_csv(
      "# a comment\nscenario,fps,body_bytes,variant,median_ms\r\nlatency, 60 ,0,c3_coop,33.4\n\n"
      "file_download,0,1048576,nat_thr,120\n",
      "m.csv");
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].scenario, "latency");
  EXPECT_EQ(cells[0].fps, 60u);
  EXPECT_EQ(cells[0].variant, "c3_coop");
  EXPECT_DOUBLE_EQ(cells[0].median_ms, 33.4);
  EXPECT_EQ(cells[0].origin, "m.csv:3");
  EXPECT_FALSE(cells[0].summary);
  EXPECT_EQ(cells[1].body_bytes, 1048576u);

  const auto with = parse_measured_csv(
      "scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms\nlatency,60,0,c3_coop,3,"
      "1,2,4,5\n",
      "m.csv");
  ASSERT_TRUE(with[0].summary);
  EXPECT_DOUBLE_EQ(with[0].summary->q1, 2);
  EXPECT_DOUBLE_EQ(with[0].summary->max, 5);
}

TEST(MeasuredCsv, NamesTheLineAndColumnOfWhatIsWrong) {
  const std::string header = "scenario,fps,body_bytes,variant,median_ms\n";
  EXPECT_THAT(error_of(""), HasSubstr("m.csv: expected a header line"));
  EXPECT_THAT(error_of("scenario,fps,variant,median_ms\n"),
              HasSubstr("m.csv:1: header: expected a column 'body_bytes'"));
  EXPECT_THAT(error_of(header), HasSubstr("expected at least one cell"));
  EXPECT_THAT(error_of(header + "latency,60,0,c3_coop\n"),
              HasSubstr("m.csv:2: expected 5 comma-separated fields"));
  EXPECT_THAT(error_of(header + "latency,sixty,0,c3_coop,3\n"),
              HasSubstr("m.csv:2: fps: expected a number, got 'sixty'"));
  EXPECT_THAT(error_of(header + "latency,60,0,c3_coop,nan\n"),
              HasSubstr("m.csv:2: median_ms: expected a finite number"));
  EXPECT_THAT(error_of(header + "latency,60,0,c3_coop,-1\n"),
              HasSubstr("median_ms: expected a finite number >= 0"));
  EXPECT_THAT(error_of(header + ",60,0,c3_coop,1\n"),
              HasSubstr("m.csv:2: scenario: expected a name"));
  EXPECT_THAT(error_of(header + "latency,60,0,c3_coop,1\nlatency,60,0,c3_coop,2\n"),
              HasSubstr("m.csv:3: cell latency,60,0,c3_coop appears twice (first at m.csv:2)"));
  EXPECT_THAT(error_of("scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_"
                       "ms\nlatency,60,0,c3_coop,3,1,4,2,5\n"),
              HasSubstr("m.csv:2: expected min_ms <= q1_ms <= median_ms <= q3_ms <= max_ms"));
}

// Found by tests/fuzz (measured_csv): a repeated header column left fewer columns than fields, so
// a line with as many fields as columns was read past its end.
TEST(MeasuredCsv, ARepeatedHeaderColumnIsAnError) {
  EXPECT_THAT(error_of("scenario,fps,body_bytes,variant,median_ms,scenario\n"
                       "latency,60,0,c3_coop,1\n"),
              HasSubstr("m.csv:1: header: expected distinct column names, got 'scenario' twice"));
}

TEST(MeasuredCsv, SummariesAttachByCellKey) {
  auto medians = parse_measured_csv(
      "scenario,fps,body_bytes,variant,median_ms\nlatency,60,0,c3_coop,3\nlatency,60,0,nat_coop,"
      "9\n",
      "a");
  attach_summaries(
      medians,
      parse_measured_csv("scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms\n"
                         "latency,60,0,nat_coop,9,8,8.5,9.5,10\n",
                         "b"));
  EXPECT_FALSE(medians[0].summary);
  ASSERT_TRUE(medians[1].summary);
  EXPECT_DOUBLE_EQ(medians[1].summary->min, 8);
}

TEST(MeasuredCsv, AMissingFileIsAnInputError) {
  EXPECT_THROW(load_measured_csv("/nonexistent/m.csv"), InputError);
}

}  // namespace
}  // namespace tb::scenario
