#include "twinbench/scenario/scenario_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using tb::scenario::load_scenario;
using tb::scenario::parse_scenario;
using tb::scenario::ScenarioError;
using tb::scenario::target_path;
using tb::scenario::validate_scenario;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kSource = TWINBENCH_SOURCE_DIR;
std::string published(const std::string& name) {
  return kSource + "/scenarios/published/" + name + ".textproto";
}
std::string data(const std::string& name) {
  return kSource + "/tests/scenario/data/" + name + ".textproto";
}

// The message of the ScenarioError that loading `file` throws ("" if none).
std::string load_error(const std::string& file) {
  try {
    load_scenario(file);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}
std::string parse_error(const std::string& text) {
  try {
    parse_scenario(text, "t.textproto");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}
std::string validate_error(const twinbench::Scenario& s) {
  try {
    validate_scenario(s, "code");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

// The interleave order and client models of the published run (docs/published-run.md).
void expect_published_variants(const twinbench::Scenario& s) {
  struct Expected {
    const char* name;
    twinbench::ClientKind client;
    bool threaded, session;
  };
  const std::vector<Expected> expected = {
      {"c3_coop", twinbench::C3HTTP, false, false},
      {"c3_thr", twinbench::C3HTTP, true, false},
      {"c3s_coop", twinbench::C3HTTP, false, true},
      {"c3s_thr", twinbench::C3HTTP, true, true},
      {"nat_coop", twinbench::HTTP_REQUEST, false, false},
      {"nat_thr", twinbench::HTTP_REQUEST, true, false},
  };
  ASSERT_EQ(s.variants_size(), 6);
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(s.variants(i).name(), expected[i].name);
    EXPECT_EQ(s.variants(i).client(), expected[i].client);
    EXPECT_EQ(s.variants(i).threaded(), expected[i].threaded);
    EXPECT_EQ(s.variants(i).session(), expected[i].session);
  }
  EXPECT_EQ(s.engine(), twinbench::GODOT4);
  EXPECT_EQ(s.target().base_url(), "");
  EXPECT_EQ(s.target().ping_path(), "/api/benchmark/ping/");
  EXPECT_EQ(s.target().download_path_template(), "/api/benchmark/download/{bytes}/");
  EXPECT_EQ(s.frame_loop().http_request_worker_sleep_ms(), 1.0);
  EXPECT_EQ(s.frame_loop().c3http_worker_sleep_ms(), 1.0);
  EXPECT_EQ(s.runs(), 25u);
}

TEST(PublishedScenarios, Latency) {
  const auto s = load_scenario(published("latency"));
  EXPECT_EQ(s.name(), "latency");
  expect_published_variants(s);
  EXPECT_THAT(s.frame_caps(), ::testing::ElementsAre(0u, 120u, 60u, 30u));
  EXPECT_THAT(s.body_bytes(), ::testing::ElementsAre(0u));
  EXPECT_EQ(s.warmups(), 3u);
  EXPECT_EQ(s.session_scope(), twinbench::PER_FRAME_CAP);
  EXPECT_EQ(s.download_chunk_size(), 65536u);  // GODOT4 default
  EXPECT_FALSE(s.download_to_file());
}

TEST(PublishedScenarios, SmallDownload) {
  const auto s = load_scenario(published("small_download"));
  EXPECT_EQ(s.name(), "small_download");
  expect_published_variants(s);
  EXPECT_THAT(s.frame_caps(), ::testing::ElementsAre(60u));
  EXPECT_THAT(s.body_bytes(), ::testing::ElementsAre(10240u, 20480u, 409600u));
  EXPECT_EQ(s.warmups(), 3u);
  EXPECT_EQ(s.session_scope(), twinbench::PER_SCENARIO);
  EXPECT_EQ(s.download_chunk_size(), 65536u);
  EXPECT_FALSE(s.download_to_file());
}

TEST(PublishedScenarios, FileDownload) {
  const auto s = load_scenario(published("file_download"));
  EXPECT_EQ(s.name(), "file_download");
  expect_published_variants(s);
  EXPECT_THAT(s.frame_caps(), ::testing::ElementsAre(60u));
  EXPECT_THAT(s.body_bytes(), ::testing::ElementsAre(1048576u, 8388608u, 33554432u));
  EXPECT_EQ(s.warmups(), 1u);
  EXPECT_EQ(s.session_scope(), twinbench::PER_SCENARIO);
  EXPECT_EQ(s.download_chunk_size(), 65536u);
  EXPECT_TRUE(s.download_to_file());
}

TEST(LoadScenario, AppliesDefaults) {
  const auto s = load_scenario(data("minimal"));
  EXPECT_EQ(s.engine(), twinbench::GODOT4);
  EXPECT_EQ(s.download_chunk_size(), 65536u);
  EXPECT_EQ(s.session_scope(), twinbench::PER_SCENARIO);
  EXPECT_EQ(s.warmups(), 0u);
  EXPECT_EQ(s.frame_loop().frame_work_ms(), 0.0);
  EXPECT_EQ(s.frame_loop().http_request_worker_sleep_ms(), 1.0);
  EXPECT_EQ(target_path(s, 0), "/api/benchmark/ping/");
  EXPECT_EQ(target_path(s, 1024), "/api/benchmark/download/1024/");

  const auto godot3 = parse_scenario(
      "name: 'g3' engine: GODOT3 variants { name: 'n' client: HTTP_REQUEST } frame_caps: 0 "
      "body_bytes: 0 runs: 1 "
      "frame_loop { c3http_worker_sleep_ms: 0 }",
      "g3");
  EXPECT_EQ(godot3.download_chunk_size(), 4096u);
  // An explicit 0 is kept: the field has presence, so it is not mistaken for "unset".
  EXPECT_EQ(godot3.frame_loop().c3http_worker_sleep_ms(), 0.0);
  EXPECT_EQ(godot3.frame_loop().http_request_worker_sleep_ms(), 1.0);
}

TEST(LoadScenario, TargetPathReplacesBytes) {
  twinbench::Scenario s;
  s.mutable_target()->set_download_path_template("/d/{bytes}?n={bytes}");
  EXPECT_EQ(target_path(s, 42), "/d/42?n=42");
  EXPECT_EQ(target_path(s, 0), "/api/benchmark/ping/");
}

// Each malformed file names itself, the line of the offending field and the field.
TEST(LoadScenario, SyntaxError) {
  EXPECT_THAT(load_error(data("syntax_error")),
              StartsWith(data("syntax_error") + ":5:6: Expected \":\""));
}

TEST(LoadScenario, UnknownField) {
  const auto e = load_error(data("unknown_field"));
  EXPECT_THAT(e, StartsWith(data("unknown_field") + ":8:"));
  EXPECT_THAT(e, HasSubstr("no field named \"run\""));
}

TEST(LoadScenario, ZeroRuns) {
  EXPECT_EQ(load_error(data("zero_runs")),
            data("zero_runs") + ":8: runs: expected 1 to 100000 rounds, got 0");
}

TEST(LoadScenario, TooManyClients) {
  EXPECT_EQ(load_error(data("too_many_clients")),
            data("too_many_clients") + ":8: clients: expected 1 to 1024 clients, got 5000");
}

TEST(LoadScenario, DuplicateVariantName) {
  const auto e = load_error(data("duplicate_variant"));
  EXPECT_THAT(e, StartsWith(data("duplicate_variant") +
                            ":7: variants[1].name: expected a unique variant name"));
  EXPECT_THAT(e, HasSubstr("got \"c3_coop\""));
}

TEST(LoadScenario, BadBaseUrl) {
  EXPECT_EQ(
      load_error(data("bad_base_url")),
      data("bad_base_url") +
          ":10: target.base_url: expected empty or a URL starting with http:// or https://, got "
          "\"ftp://example.com\"");
}

TEST(LoadScenario, TemplateWithoutBytes) {
  EXPECT_THAT(
      load_error(data("template_without_bytes")),
      StartsWith(data("template_without_bytes") + ":10: target.download_path_template: expected"));
}

TEST(LoadScenario, SessionOnHttpRequest) {
  EXPECT_THAT(load_error(data("session_on_http_request")),
              StartsWith(data("session_on_http_request") +
                         ":6: variants[0].session: expected session only with "
                         "client C3HTTP"));
}

TEST(LoadScenario, MissingFile) {
  EXPECT_THAT(load_error(data("does_not_exist")),
              StartsWith(data("does_not_exist") + ": cannot open"));
}

TEST(ParseScenario, PointsIntoListsAndMissingFields) {
  const std::string head =
      "name: 'x'\nvariants { name: 'a' client: C3HTTP }\nruns: 1\nbody_bytes: 0\n";
  EXPECT_THAT(parse_error(head + "frame_caps: [60,\n 2000]\n"),
              StartsWith("t.textproto:5: frame_caps[1]: expected a frame cap from 0 (uncapped) to "
                         "1000 fps, got 2000"));
  EXPECT_THAT(parse_error(head + "frame_caps: 60\nframe_caps: 60\n"),
              StartsWith("t.textproto:6: frame_caps[1]:"));
  // A missing field has no line of its own; its enclosing message's line is the best pointer.
  EXPECT_THAT(
      parse_error("name: 'x'\nvariants {\n name: 'a' }\nframe_caps: 0 body_bytes: 0 runs: 1"),
      StartsWith("t.textproto:2: variants[0].client: expected HTTP_REQUEST or C3HTTP"));
  EXPECT_EQ(parse_error("name: 'x' frame_caps: 0"),
            "t.textproto: variants: expected at least one variant, got none");
  EXPECT_THAT(
      parse_error(head + "frame_caps: 0\ndownload_chunk_size: 100\n"),
      StartsWith("t.textproto:6: download_chunk_size: expected 256 to 16777216 bytes, got 100"));
  EXPECT_THAT(parse_error(head + "frame_caps: 0\nframe_loop {\n frame_work_ms: -1 }\n"),
              StartsWith("t.textproto:7: frame_loop.frame_work_ms: expected a finite number"));
  EXPECT_THAT(
      parse_error(head + "frame_caps: 0\nvariants { name: 'Bad Name' client: C3HTTP }\n"),
      StartsWith("t.textproto:6: variants[1].name: expected a non-empty name matching [a-z0-9_]+"));
}

TEST(ParseScenario, ExpectationsSelectTheScenariosCellsAndBoundThem) {
  const std::string head =
      "name: 'x'\nvariants { name: 'a' client: C3HTTP }\nruns: 1\nbody_bytes: [0, 1024]\n"
      "frame_caps: [0, 60]\n";
  EXPECT_EQ(parse_error(head + "expect { variants: 'a' frame_caps: 60 body_bytes: 1024\n"
                               " statistic: QUANTILE quantile: 0.95 max_ms: 100 max_frames: 6 }\n"
                               "expect { statistic: MAX max_frames: 10 allow_failures: true }\n"),
            "");
  EXPECT_EQ(parse_error(head + "expect {\n variants: 'b' max_ms: 1 }\n"),
            "t.textproto:7: expect[0].variants[0]: expected the name of one of the scenario's "
            "variants, got \"b\"");
  EXPECT_EQ(parse_error(head + "expect { max_ms: 1 }\nexpect {\n frame_caps: 30 max_ms: 1 }\n"),
            "t.textproto:8: expect[1].frame_caps[0]: expected one of the scenario's frame_caps, "
            "got 30");
  EXPECT_EQ(parse_error(head + "expect { body_bytes: 2048 max_ms: 1 }\n"),
            "t.textproto:6: expect[0].body_bytes[0]: expected one of the scenario's body_bytes, "
            "got 2048");
  EXPECT_EQ(parse_error(head + "expect {\n variants: 'a' }\n"),
            "t.textproto:6: expect[0].max_ms: expected a bound: max_ms, max_frames or both, got "
            "none");
  EXPECT_EQ(parse_error(head + "expect { statistic: QUANTILE max_ms: 1 }\n"),
            "t.textproto:6: expect[0].quantile: expected a quantile from 0 to 1 (with statistic "
            "QUANTILE), got none");
  EXPECT_EQ(parse_error(head + "expect { statistic: QUANTILE quantile: 1.5 max_ms: 1 }\n"),
            "t.textproto:6: expect[0].quantile: expected a quantile from 0 to 1 (with statistic "
            "QUANTILE), got 1.5");
  EXPECT_EQ(parse_error(head + "expect { quantile: 0.5 max_ms: 1 }\n"),
            "t.textproto:6: expect[0].quantile: expected no quantile unless statistic is QUANTILE, "
            "got quantile 0.5 with statistic MEDIAN");
  EXPECT_EQ(parse_error(head + "expect {\n max_frames: -2 }\n"),
            "t.textproto:7: expect[0].max_frames: expected a finite number of frames >= 0, got -2");
  EXPECT_EQ(parse_error(head + "expect { max_ms: inf }\n"),
            "t.textproto:6: expect[0].max_ms: expected a finite number of milliseconds >= 0, got "
            "inf");
  EXPECT_THAT(parse_error(head + "expect { statistic: MEAN max_ms: 1 }\n"),
              StartsWith("t.textproto:6:"));  // the parser's: no such statistic
}

TEST(ValidateScenario, CodeBuiltScenario) {
  twinbench::Scenario s;
  s.set_name("code_built");
  auto* v = s.add_variants();
  v->set_name("c3s_coop");
  v->set_client(twinbench::C3HTTP);
  v->set_session(true);
  s.add_frame_caps(60);
  s.add_body_bytes(0);
  s.set_runs(3);
  EXPECT_EQ(validate_error(s), "");  // unset fields with defaults are fine

  auto bad = s;
  bad.mutable_frame_loop()->set_frame_work_ms(std::nan(""));
  EXPECT_EQ(
      validate_error(bad),
      "code: frame_loop.frame_work_ms: expected a finite number of milliseconds >= 0, got nan");
  bad = s;
  bad.set_runs(0);
  EXPECT_EQ(validate_error(bad), "code: runs: expected 1 to 100000 rounds, got 0");
  bad = s;
  bad.add_body_bytes(0);
  EXPECT_THAT(validate_error(bad), StartsWith("code: body_bytes[1]: expected distinct values"));
  bad = s;
  bad.set_name("");
  EXPECT_THAT(validate_error(bad), StartsWith("code: name: expected a non-empty name"));
  bad = s;
  bad.mutable_target()->set_base_url("example.com");
  EXPECT_THAT(validate_error(bad), StartsWith("code: target.base_url: expected empty or a URL"));
}

}  // namespace
