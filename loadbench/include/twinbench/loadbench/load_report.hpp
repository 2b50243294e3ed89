// The load benchmark's result files: one JSON per repetition, and a summary across repetitions
// (median and range of each figure) as one CSV row and a Markdown table.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "load.pb.h"

namespace tb::loadbench {

// Throughput and latency percentiles of one repetition from its ascending latencies.
void fill_load_figures(twinbench::LoadRepetition& repetition,
                       const std::vector<double>& sorted_latencies_ms, double body_bytes);

// The header of load_summary_csv_row, so summaries of several runs concatenate into one table.
std::string load_summary_csv_header();
// Throws std::invalid_argument for no repetitions.
std::string load_summary_csv_row(const std::vector<twinbench::LoadRepetition>& repetitions);
std::string load_summary_markdown(const std::vector<twinbench::LoadRepetition>& repetitions);

// dir/repetition-<k>.json per repetition, dir/summary.csv and dir/summary.md, each atomically.
void write_load_results(const std::vector<twinbench::LoadRepetition>& repetitions,
                        const std::filesystem::path& dir);

}  // namespace tb::loadbench
