#include "twinbench/runner/run_scenario.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>

#include "twinbench/clientcore/c3http_model.hpp"
#include "twinbench/clientcore/frame_loop.hpp"
#include "twinbench/clientcore/http_request_model.hpp"
#include "twinbench/clientcore/session.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/network.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/seeds.hpp"

namespace tb::runner {

namespace {

Duration ms(double v) { return from_ms(v); }

constexpr const char* kTimedOut = "timed out";

struct Step {
  std::uint32_t fps;
  std::uint64_t body_bytes;
  std::uint32_t round;
  bool warmup;
  std::size_t variant;
  bool new_sessions;  // the session scope starts here
};

std::vector<Step> plan(const twinbench::Scenario& s) {
  std::vector<Step> steps;
  const std::uint32_t rounds = s.warmups() + s.runs();
  bool first = true;
  for (std::uint32_t fps : s.frame_caps()) {
    bool cap_start = true;
    for (std::uint64_t bytes : s.body_bytes()) {
      for (std::uint32_t round = 0; round < rounds; ++round) {
        for (int v = 0; v < s.variants_size(); ++v) {
          const bool fresh = first || (cap_start && s.session_scope() == twinbench::PER_FRAME_CAP);
          steps.push_back(
              Step{fps, bytes, round, round < s.warmups(), static_cast<std::size_t>(v), fresh});
          first = cap_start = false;
        }
      }
    }
  }
  return steps;
}

// One game client running the scenario's protocol: its frame loop, models, Sessions and script.
class ScenarioRun {
 public:
  ScenarioRun(const twinbench::Scenario& s, Backend& b, const RunOptions& o,
              std::uint32_t client = 0)
      : s_(s),
        b_(b),
        o_(o),
        client_(client),
        steps_(plan(s)),
        frames_(b.scheduler, FrameLoopConfig{s.frame_caps(0), ms(s.frame_loop().frame_work_ms())}) {
    base_url_ = o.base_url.empty() ? s.target().base_url() : o.base_url;
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  }

  std::size_t steps() const { return steps_.size(); }

  // The game starts: its first frame begins now, and the script's first request in it.
  void start() {
    results_.mutable_scenario()->CopyFrom(s_);
    auto* info = results_.mutable_run();
    info->set_backend(b_.name);
    info->set_seed(o_.seed);
    info->set_server(base_url_);
    info->set_server_nodelay(o_.server_nodelay);
    info->set_keep_alive(true);
    info->set_twinbench_version(TWINBENCH_VERSION);  // the CMake project's version
    run_started_ = b_.scheduler.now();
    frames_.start();
    frames_.await_process_frame([this] { start_step(); });
  }

  bool finished() const { return next_ == steps_.size() && idle_; }

  twinbench::ResultSet stop() {
    frames_.stop();
    return std::move(results_);
  }

  twinbench::ResultSet run() {
    start();
    const Duration budget = o_.request_timeout * static_cast<std::int64_t>(steps_.size() + 1);
    const bool done = b_.run_until([this] { return finished() || o_.stopping(); }, budget);
    auto results = stop();
    if (o_.stopping()) throw RunStopped();
    if (!done) throw std::runtime_error("the run stopped making progress");
    return results;
  }

 private:
  std::unique_ptr<ClientModel> make_model(const twinbench::Variant& v) {
    ModelRuntime rt{frames_, b_.threads, b_.transports, b_.resolver, &b_.sinks};
    const auto& fl = s_.frame_loop();
    const auto tls = o_.tls ? std::make_shared<TlsClientContext>(*o_.tls) : nullptr;
    if (v.client() == twinbench::HTTP_REQUEST) {
      HttpRequestOptions o;
      o.profile =
          s_.engine() == twinbench::GODOT3 ? EngineProfile::kGodot3 : EngineProfile::kGodot4;
      o.use_threads = v.threaded();
      o.download_chunk_size = s_.download_chunk_size();
      o.worker_sleep = ms(fl.http_request_worker_sleep_ms());
      o.tls = tls;
      return std::make_unique<HttpRequestModel>(rt, o);
    }
    C3HttpOptions o;
    o.use_threads = v.threaded();
    o.download_chunk_size = s_.download_chunk_size();
    o.worker_sleep = ms(fl.c3http_worker_sleep_ms());
    o.session = v.session() ? sessions_.at(v.name()).get() : nullptr;
    o.tls = tls;
    return std::make_unique<C3HttpModel>(rt, o);
  }

  void renew_sessions_and_models() {
    models_.clear();  // models hold Session pointers: drop them first
    sessions_.clear();
    for (const auto& v : s_.variants()) {
      if (v.session()) sessions_[v.name()] = std::make_unique<Session>(b_.scheduler);
    }
    for (const auto& v : s_.variants()) models_.push_back(make_model(v));
  }

  // Runs in the phase where the previous request's awaiting script resumed.
  void start_step() {
    if (next_ == steps_.size()) {
      idle_ = true;
      return;
    }
    idle_ = false;
    const Step step = steps_[next_];
    const std::size_t index = next_++;
    if (step.new_sessions) renew_sessions_and_models();
    if (frames_.config().fps_cap != step.fps) {
      frames_.set_config(FrameLoopConfig{step.fps, ms(s_.frame_loop().frame_work_ms())});
    }
    const auto& variant = s_.variants(static_cast<int>(step.variant));
    if (o_.elsewhere && o_.elsewhere->variants.count(variant.name())) {
      pass_step_run_elsewhere(step, variant.name());
      return;
    }
    RequestSpec spec;
    spec.url = base_url_ + scenario::target_path(s_, step.body_bytes);
    if (s_.download_to_file() && step.body_bytes > 0) {
      // Clients of a load download at once: each to its own files.
      spec.download_file = (client_ > 0 ? "client" + std::to_string(client_) + "-" : "") +
                           variant.name() + "-" + std::to_string(step.body_bytes) + "-" +
                           std::to_string(step.round) + ".bin";
    }
    const Time started = b_.scheduler.now();
    const std::uint64_t first_frame = frames_.frames();
    ClientModel& model = *models_[step.variant];
    auto finished = std::make_shared<bool>(false);
    model.request(spec, [this, step, started, first_frame, spec, index,
                         finished](const Completion& c) {
      *finished = true;
      record(step, spec, c, b_.scheduler.now() - started, frames_.frames() - first_frame, index);
      continue_script();
    });
    // A request that never completes is cancelled and recorded, and the run goes on.
    b_.scheduler.schedule_at(started + o_.request_timeout, [this, &model, step, spec, started,
                                                            first_frame, index, finished] {
      if (*finished) return;
      *finished = true;
      model.cancel();
      Completion c;
      c.result = RequestResult::kCancelled;
      c.error = kTimedOut;
      record(step, spec, c, b_.scheduler.now() - started, frames_.frames() - first_frame, index);
      frames_.await_process_frame([this] { start_step(); });
    });
  }

  // The script has resumed after a request (where its model delivered the completion): it starts
  // the next one there, or first awaits the next frame's process_frame (scenario.request_start).
  void continue_script() {
    if (s_.request_start() == twinbench::NEXT_PROCESS_FRAME)
      return frames_.await_process_frame([this] { start_step(); });
    start_step();
  }

  // A step simulated in another part: the script goes on where that step's awaiting script would
  // have resumed, in its model's completion phase: with its span, in the frame it ended there (so
  // the steps run here see the idle gaps of the whole run); without, in the next frame.
  void pass_step_run_elsewhere(const Step& step, const std::string& variant) {
    const auto phase = models_[step.variant]->completion_phase();
    const auto& span_of_step = o_.elsewhere->span_of_step;
    if (!span_of_step)
      return frames_.at(frames_.frames() + 1, phase, [this] { continue_script(); });
    const auto [frames, timed_out] =
        span_of_step(StepKey{variant, step.fps, step.body_bytes, step.round});
    // A timed-out request is recorded when the timeout fires; the script resumes at the next
    // process_frame.
    const auto frame = frames_.frames() + frames + (timed_out ? 1 : 0);
    const auto at = timed_out ? FramePhase::kProcessFrame : phase;
    // A timed-out step resumes at a process_frame, so it needs no further wait.
    if (timed_out) {
      if (!frames_.ahead(frame, at)) return start_step();
      return frames_.at(frame, at, [this] { start_step(); });
    }
    if (!frames_.ahead(frame, at)) return continue_script();  // it ended without waiting
    frames_.at(frame, at, [this] { continue_script(); });
  }

  void record(const Step& step, const RequestSpec& spec, Completion c, Duration elapsed,
              std::uint64_t frames, std::size_t index) {
    // Downloads must bring exactly the bytes asked for; the ping (size 0) just has to succeed.
    const std::uint64_t expected = step.body_bytes;
    if (c.result == RequestResult::kSuccess) {
      std::string problem;
      if (c.http_status != 200)
        problem = "HTTP status " + std::to_string(c.http_status);
      else if (expected > 0 && c.body_bytes != expected)
        problem = "body has " + std::to_string(c.body_bytes) + " bytes, expected " +
                  std::to_string(expected);
      else if (!spec.download_file.empty())
        problem = b_.check_download(spec.download_file, expected);
      if (!problem.empty()) {
        c.result = RequestResult::kRequestFailed;
        c.error = problem;
      }
    } else if (!spec.download_file.empty()) {
      b_.check_download(spec.download_file, expected);  // removes what was written
    }
    auto* sample = results_.add_samples();
    sample->set_scenario(s_.name());
    sample->set_client(client_);
    sample->set_variant(s_.variants(static_cast<int>(step.variant)).name());
    sample->set_fps(step.fps);
    sample->set_body_bytes(step.body_bytes);
    sample->set_round(step.round);
    sample->set_warmup(step.warmup);
    sample->set_elapsed_ms(to_ms(elapsed));
    if (link_changes_) sample->set_started_ms(to_ms(b_.scheduler.now() - elapsed - run_started_));
    sample->set_frames(frames);
    sample->set_result(to_string(c.result));
    sample->set_http_status(static_cast<std::uint32_t>(c.http_status));
    sample->set_bytes_received(c.body_bytes);
    sample->set_reused_connection(c.reused_connection);
    sample->set_error(c.error);
    if (o_.on_sample) o_.on_sample(*sample, index + 1, steps_.size());
  }

  const twinbench::Scenario& s_;
  Backend& b_;
  const RunOptions& o_;
  std::uint32_t client_;
  std::vector<Step> steps_;
  std::size_t next_ = 0;
  bool idle_ = false;
  FrameLoop frames_;
  // A link that changes over time: samples say when they started (Sample.started_ms).
  bool link_changes_ = scenario::varies_over_time(s_.network().link());
  Time run_started_{};
  std::string base_url_;
  std::map<std::string, std::unique_ptr<Session>> sessions_;
  std::vector<std::unique_ptr<ClientModel>> models_;
  twinbench::ResultSet results_;
};

}  // namespace

StepKey step_of(const twinbench::Sample& sample) {
  return StepKey{sample.variant(), sample.fps(), sample.body_bytes(), sample.round()};
}

StepSpan span_of(const twinbench::Sample& sample) {
  return StepSpan{sample.frames(), sample.result() == to_string(RequestResult::kCancelled) &&
                                       sample.error() == kTimedOut};
}

std::vector<StepKey> protocol_steps(const twinbench::Scenario& s) {
  std::vector<StepKey> keys;
  for (const auto& step : plan(s)) {
    keys.push_back(StepKey{s.variants(static_cast<int>(step.variant)).name(), step.fps,
                           step.body_bytes, step.round});
  }
  return keys;
}

namespace {

// When client `k` of a load starts its game: client 0 at once, the others at a phase within the
// first frame drawn from the seed (game clients do not start their frames in step).
Duration start_offset(const twinbench::Scenario& s, std::uint64_t seed, std::uint32_t k) {
  if (k == 0) return Duration{0};
  const std::uint32_t fps = s.frame_caps(0);
  const Duration period = fps > 0 ? from_ms(1000.0 / fps) : ms(s.frame_loop().frame_work_ms());
  constexpr std::uint64_t kSteps = 1'000'000;  // phases in millionths of a frame
  const auto phase = scenario::splitmix64(seed * 1'000'003u + k) % kSteps;
  return period * static_cast<std::int64_t>(phase) / static_cast<std::int64_t>(kSteps);
}

// Several game clients on one backend, all at once; their samples in client order.
twinbench::ResultSet run_clients(const twinbench::Scenario& s, Backend& b, const RunOptions& o,
                                 std::uint32_t clients) {
  if (!b.runs_many_clients)
    throw InputError("scenario.clients: " + std::to_string(clients) +
                     " clients run in simulation only (--backend sim); for a live load on a "
                     "server use `twinbench load`");
  // Progress counts every client's samples.
  RunOptions each = o;
  std::size_t recorded = 0;
  const std::size_t total = protocol_steps(s).size() * clients;
  if (o.on_sample)
    each.on_sample = [&](const twinbench::Sample& sample, std::size_t, std::size_t) {
      o.on_sample(sample, ++recorded, total);
    };
  std::vector<std::unique_ptr<ScenarioRun>> runs;
  for (std::uint32_t k = 0; k < clients; ++k)
    runs.push_back(std::make_unique<ScenarioRun>(s, b, each, k));
  const Time now = b.scheduler.now();
  for (std::uint32_t k = 0; k < clients; ++k)
    b.scheduler.schedule_at(now + start_offset(s, o.seed, k),
                            [run = runs[k].get()] { run->start(); });
  const Duration budget = o.request_timeout * static_cast<std::int64_t>(runs[0]->steps() + 2);
  const bool done = b.run_until(
      [&] {
        return o.stopping() ||
               std::all_of(runs.begin(), runs.end(), [](auto& r) { return r->finished(); });
      },
      budget);
  twinbench::ResultSet merged = runs[0]->stop();
  for (std::uint32_t k = 1; k < clients; ++k) {
    auto results = runs[k]->stop();
    for (auto& sample : *results.mutable_samples()) *merged.add_samples() = std::move(sample);
  }
  if (o.stopping()) throw RunStopped();
  if (!done) throw std::runtime_error("the run stopped making progress");
  return merged;
}

}  // namespace

twinbench::ResultSet run_scenario(const twinbench::Scenario& scenario, Backend& backend,
                                  const RunOptions& options) {
  const std::uint32_t clients = scenario.has_clients() ? scenario.clients() : 1;
  if (clients > 1) return run_clients(scenario, backend, options, clients);
  return ScenarioRun(scenario, backend, options).run();
}

}  // namespace tb::runner
