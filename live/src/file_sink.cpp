#include "twinbench/live/file_sink.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <utility>
#include <vector>

namespace tb::live {
namespace {

class FileSink final : public BodySink {
 public:
  explicit FileSink(std::FILE* file) : file_(file) {}
  ~FileSink() override { finish(); }

  bool write(std::span<const std::byte> data) override {
    if (file_ == nullptr) return false;
    return std::fwrite(data.data(), 1, data.size(), file_) == data.size();
  }
  bool finish() override {
    if (file_ == nullptr) return false;
    const bool ok = std::fflush(file_) == 0 && std::ferror(file_) == 0;
    return std::fclose(std::exchange(file_, nullptr)) == 0 && ok;
  }

 private:
  std::FILE* file_;
};

}  // namespace

std::unique_ptr<BodySink> FileSinkFactory::open(const std::string& name) {
  std::FILE* file = std::fopen((directory_ / name).c_str(), "wb");
  if (file == nullptr) return nullptr;
  return std::make_unique<FileSink>(file);
}

TempDir::TempDir(const std::string& prefix) {
  const std::string pattern =
      (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  path_ = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace tb::live
