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

}  // namespace tb::live
