// Result files of a run: JSON (every sample), CSV (one row per cell, the published columns) and a
// Markdown report in the style of the published BENCHMARK.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "results.pb.h"
#include "twinbench/scenario/text.hpp"

namespace tb::scenario {

// The measured (non-warmup) samples of one (scenario, fps, body_bytes, variant).
struct Cell {
  std::string scenario;
  std::uint32_t fps = 0;
  std::uint64_t body_bytes = 0;
  std::string variant;
  std::vector<double> elapsed_ms;  // successful samples, in round order
  std::vector<double> frames;      // same samples
  std::size_t failures = 0;        // measured samples whose result is not "success"
  std::string first_error;         // error (or result) of the first failure
};

// The key of a cell, "scenario,fps,body_bytes,variant": one spelling for every map of cells.
std::string cell_key(const std::string& scenario, std::uint32_t fps, std::uint64_t body_bytes,
                     const std::string& variant);

// Cells with at least one measured sample, in the published row order: scenario by first
// appearance, then the scenario's frame_caps, body_bytes and variants orders (values the
// scenario does not list come after, by first appearance).
std::vector<Cell> collect_cells(const twinbench::ResultSet& results);

// A field quoted for CSV when it holds a comma, quote or line break.
std::string csv_field(const std::string& s);
// Text made safe for a Markdown table cell.
std::string md_cell(std::string s);
// Any result message as indented JSON with the schema's field names, defaults included.
std::string message_json(const google::protobuf::Message& message);

std::string results_json(const twinbench::ResultSet& results);
// A results.json written by results_json; throws InputError naming the file if it cannot be read
// or is not one.
twinbench::ResultSet read_results_json(const std::filesystem::path& file);
// Header: scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms,runs. Cells without
// a successful sample have empty ms fields and runs 0.
std::string results_csv(const twinbench::ResultSet& results);
// `appendix`: Markdown after the tables (the expectations' verdicts of `twinbench run`).
std::string results_markdown(const twinbench::ResultSet& results, std::string_view appendix = {});

// dir/results.json, dir/results.csv and dir/results.md, each written atomically.
void write_results(const twinbench::ResultSet& results, const std::filesystem::path& dir,
                   std::string_view markdown_appendix = {});

// Labels as the published tables write them: "uncapped" or "60 fps"; "512 B", "64 KB", "8 MB"
// (KB = 1024 bytes, MB = 1024 KB).
std::string fps_label(std::uint32_t fps);
std::string size_label(std::uint64_t bytes);
// A cell in verdicts and messages: "nat_coop, 60 fps, 1 MB".
std::string cell_label(const std::string& variant, std::uint32_t fps, std::uint64_t body_bytes);

}  // namespace tb::scenario
