#include "twinbench/live/live_backend.hpp"

#include <filesystem>
#include <system_error>

namespace tb::live {

LiveBackend::LiveBackend(live::TransportOptions transport_options)
    : transports_(io_, transport_options),
      backend_{scheduler_,
               threads_,
               transports_,
               resolver_,
               sinks_,
               [this](const std::function<bool()>& done, Duration timeout) {
                 return scheduler_.run_until(done, timeout);
               },
               [this](const std::string& name, std::uint64_t expected) -> std::string {
                 const auto path = downloads_.path() / name;
                 std::error_code size_error, remove_error;
                 const auto size = std::filesystem::file_size(path, size_error);
                 std::filesystem::remove(path, remove_error);
                 if (size_error) return "download file missing: " + path.string();
                 if (size != expected) {
                   return "download file has " + std::to_string(size) + " bytes, expected " +
                          std::to_string(expected);
                 }
                 return {};
               },
               "live"} {}

void LiveBackend::record_host_timing(twinbench::RunInfo& run) const {
  const WakeupSummary s = wakeup_lateness();
  auto& timing = *run.mutable_host_timing();
  timing.set_wakeups(s.wakeups);
  timing.set_p50_us(s.p50_us);
  timing.set_p99_us(s.p99_us);
  timing.set_max_us(s.max_us);
}

}  // namespace tb::live
