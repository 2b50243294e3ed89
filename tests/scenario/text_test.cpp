#include "twinbench/scenario/text.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

namespace tb::scenario {
namespace {

namespace fs = std::filesystem;

TEST(Text, SplitKeepsEmptyPartsAndTrimRemovesWhiteSpace) {
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_EQ(split("", ','), (std::vector<std::string_view>{""}));
  EXPECT_EQ(split("a,", ','), (std::vector<std::string_view>{"a", ""}));
  EXPECT_EQ(trim(" \t x y \r\n"), "x y");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(lower("RTT=10Ms"), "rtt=10ms");
}

TEST(Text, WritesAtomicallyAndReadsBack) {
  const fs::path dir = fs::temp_directory_path() / ("tb-text-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path file = dir / "sub" / "out.txt";
  EXPECT_FALSE(read_file(file));
  write_file_atomically(file, "first");
  write_file_atomically(file, "second, longer");
  EXPECT_EQ(read_file(file), "second, longer");
  std::size_t entries = 0;  // no temporary file left beside it
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(file.parent_path())) ++entries;
  EXPECT_EQ(entries, 1u);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::others_read, fs::perms::others_read);
  fs::remove_all(dir);
}

// A directory opens as a stream and reads as empty; an endless device never ends: both refused.
TEST(Text, ReadFileRefusesDirectoriesAndEndlessInputs) {
  errno = 0;
  EXPECT_FALSE(read_file(fs::temp_directory_path()));
  EXPECT_EQ(errno, EISDIR);
  EXPECT_FALSE(read_file("/dev/zero"));
  EXPECT_EQ(errno, EFBIG);
  EXPECT_FALSE(read_file("/nonexistent/file"));
  EXPECT_EQ(errno, ENOENT);
}

TEST(Text, PrintableEscapesWhatATerminalWouldGarble) {
  EXPECT_EQ(printable("plain text, 1.5"), "plain text, 1.5");
  EXPECT_EQ(printable(std::string("a\0b\xff\n", 5)), "a\\x00b\\xff\\x0a");
  const std::string truncated = std::string(80, 'x').append("...");  // g++ 12 misreads `+` here
  EXPECT_EQ(printable(std::string(100, 'x')), truncated);
}

}  // namespace
}  // namespace tb::scenario
