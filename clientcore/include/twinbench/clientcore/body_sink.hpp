#pragma once
// Where a downloaded body goes when a model streams it to a file (HTTPRequest.download_file,
// C3Http's download option). The live backend writes real files; the simulation counts bytes.
#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace tb {

class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual bool write(std::span<const std::byte> data) = 0;  // false on a write error
  virtual bool finish() = 0;                                // flush and close
};

class BodySinkFactory {
 public:
  virtual ~BodySinkFactory() = default;
  virtual std::unique_ptr<BodySink> open(const std::string& name) = 0;  // nullptr on failure
};

}  // namespace tb
