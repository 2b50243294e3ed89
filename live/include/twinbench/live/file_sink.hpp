#pragma once
// Body sinks that write real files (HTTPRequest.download_file in live runs), and a scratch
// directory to put them in.
#include <filesystem>
#include <memory>
#include <string>

#include "twinbench/clientcore/body_sink.hpp"

namespace tb::live {

class FileSinkFactory final : public BodySinkFactory {
 public:
  explicit FileSinkFactory(std::filesystem::path directory) : directory_(std::move(directory)) {}
  // Creates or truncates directory/name; nullptr if it cannot be opened.
  std::unique_ptr<BodySink> open(const std::string& name) override;

 private:
  std::filesystem::path directory_;
};

// A fresh directory under the system temp directory (mkdtemp), removed with its contents on
// destruction. Throws std::system_error if it cannot be created.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "twinbench-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tb::live
