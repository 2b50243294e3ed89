// `twinbench trace SHAPE --out FILE`: a delivery trace in Mahimahi's format from a seeded shape
// (link/trace_shapes.hpp; docs/scenarios.md, "Links that change over time").
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "twinbench/link/trace_shapes.hpp"
#include "twinbench/scenario/delivery_trace.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::app {

namespace {

struct TraceArgs {
  link::TraceShape shape;
  std::string out;
};

void trace_command(const TraceArgs& a) {
  const auto opportunities = link::opportunities_for(link::rate_per_ms(a.shape));
  scenario::write_file_atomically(a.out, link::trace_text(opportunities));
  std::cerr << fmt::format("trace: wrote {}: {} opportunities in {} ms, mean {:.3f} Mbit/s\n",
                           a.out, opportunities.size(), opportunities.back(),
                           scenario::trace_mean_mbps(opportunities));
}

}  // namespace

Command add_trace_command(CLI::App& app) {
  auto a = std::make_shared<TraceArgs>();
  auto* cmd = app.add_subcommand(
      "trace", "Write a delivery trace (Mahimahi's format) of a seeded shape: steps, walk or fade");
  cmd->require_subcommand(1);
  const auto common = [&](CLI::App* shape) {
    shape->add_option("--out,-o", a->out, "The trace file to write")->required();
    shape
        ->add_option("--duration-ms", a->shape.duration_ms,
                     "The trace's length, its period when it loops")
        ->default_val(10000)
        ->check(CLI::Range(1u, 86'400'000u));
  };
  auto* steps = cmd->add_subcommand("steps", "Rates in turn, each for --step-ms");
  common(steps);
  steps->add_option("--mbps", a->shape.step_mbps, "The rates, in Mbit/s (comma-separated)")
      ->required()
      ->delimiter(',');
  steps->add_option("--step-ms", a->shape.step_ms, "How long each rate lasts")->default_val(1000);
  steps->callback([a] { a->shape.kind = link::ShapeKind::kSteps; });
  auto* walk =
      cmd->add_subcommand("walk", "A random walk between --min-mbps and --max-mbps, with outages");
  common(walk);
  walk->add_option("--min-mbps", a->shape.min_mbps)->default_val(1);
  walk->add_option("--max-mbps", a->shape.max_mbps)->default_val(50);
  walk->add_option("--step-mbps", a->shape.walk_step_mbps,
                   "The largest change of the rate per 100 ms")
      ->default_val(2);
  walk->add_option("--outage-every-ms", a->shape.outage_every_ms,
                   "One outage (rate 0) this often on average; 0: none")
      ->default_val(0);
  walk->add_option("--outage-ms", a->shape.outage_ms, "Each outage's length")->default_val(300);
  walk->add_option("--seed", a->shape.seed, "The walk's and the outages' seed")->default_val(1);
  walk->callback([a] { a->shape.kind = link::ShapeKind::kWalk; });
  auto* fade =
      cmd->add_subcommand("fade", "From --max-mbps down to --min-mbps and back, every --period-ms");
  common(fade);
  fade->add_option("--min-mbps", a->shape.min_mbps)->default_val(1);
  fade->add_option("--max-mbps", a->shape.max_mbps)->default_val(50);
  fade->add_option("--period-ms", a->shape.period_ms)->default_val(4000);
  fade->callback([a] { a->shape.kind = link::ShapeKind::kFade; });
  return {cmd, [a] { trace_command(*a); }};
}

}  // namespace tb::app
