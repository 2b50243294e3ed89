#pragma once
// The small text and file helpers every layer above uses, in one place: splitting and trimming
// user text, reading a whole file, and writing one atomically.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb::scenario {

// The parts between separators; "" gives one empty part, "a," gives "a" and "".
std::vector<std::string_view> split(std::string_view text, char separator);
// Without leading and trailing white space (spaces, tabs, CR, LF).
std::string_view trim(std::string_view text);
std::string lower(std::string_view text);

// User text for an error message: bytes outside printable ASCII as \xNN, cut after 80 characters
// (a binary file's first line, or invalid UTF-8, must not garble the terminal).
std::string printable(std::string_view text);

// The length of the structurally valid UTF-8 sequence starting at text[i] (1 to 4), or 0 when
// the bytes there are not one (a stray continuation byte, a truncated sequence).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);
// Every byte belongs to a valid UTF-8 sequence.
bool is_utf8(std::string_view text);

// Inputs larger than this are refused: they are no scenario, profile or CSV (/dev/zero, a disk
// image), and reading them whole would exhaust memory.
constexpr std::uintmax_t kMaxInputBytes = 256u << 20;

// The whole file, or nothing if it cannot be opened or read; then errno says why (EISDIR for a
// directory, EFBIG beyond kMaxInputBytes).
std::optional<std::string> read_file(const std::filesystem::path& path);

// Writes a temporary file beside `path`, fsyncs it and renames it over `path`, creating parent
// directories. Readers never see a partial file. Throws std::runtime_error naming the path.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace tb::scenario
