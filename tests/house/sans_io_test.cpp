// The sans-IO rooms (clientcore, servercore, tlsio, loadbench/exchange, link) hold no sockets,
// threads or clocks of their own: no file in them includes Asio, ns-3, a socket or thread header
// or Beast's stream I/O, or reads a clock. Backends bring the I/O (live/, sim/, emulated/). The
// rule is checked on the sources as they are, and the checker on a file that breaks it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace tb {
namespace {

namespace fs = std::filesystem;

// What a sans-IO file may not contain, with why.
struct Forbidden {
  std::regex pattern;
  const char* what;
};

const std::vector<Forbidden>& forbidden() {
  static const std::vector<Forbidden> rules = {
      {std::regex(R"(#\s*include\s*[<"]boost/asio)"), "Asio"},
      {std::regex(R"(#\s*include\s*[<"]boost/beast/(http\.hpp|core\.hpp|core/tcp_stream|ssl|websocket))"),
       "Beast's stream I/O"},
      {std::regex(R"(#\s*include\s*[<"]ns3/)"), "ns-3"},
      {std::regex(R"(#\s*include\s*<(sys/socket|netinet/|arpa/inet|netdb|sys/epoll|poll)\b)"),
       "a socket header"},
      {std::regex(R"(#\s*include\s*<(thread|future|unistd\.h|pthread\.h)>)"), "threads or syscalls"},
      {std::regex(R"(\b(steady_clock|system_clock|high_resolution_clock)::now\b)"), "a clock"},
      {std::regex(R"(\bstd::(thread|jthread|async)\b)"), "a thread"},
  };
  return rules;
}

// "file:line: what (the line)" for each line of `text` that breaks the rule.
std::vector<std::string> violations(const std::string& name, const std::string& text) {
  std::vector<std::string> found;
  std::size_t line_number = 0, start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    ++line_number;
    const bool comment = line.find_first_not_of(" \t") != std::string::npos &&
                         line.compare(line.find_first_not_of(" \t"), 2, "//") == 0;
    for (const Forbidden& rule : forbidden())
      if (!comment && std::regex_search(line, rule.pattern))
        found.push_back(name + ":" + std::to_string(line_number) + ": " + rule.what + " (" +
                        line + ")");
    start = end + 1;
  }
  return found;
}

TEST(SansIo, NoRoomWithoutIoIncludesIoOrReadsAClock) {
  std::size_t files = 0;
  std::vector<std::string> found;
  for (const char* room : {"clientcore", "servercore", "tlsio", "loadbench/exchange", "link"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(TWINBENCH_SOURCE_DIR) / room)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      std::ifstream in(entry.path());
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto here = violations(fs::relative(entry.path(), TWINBENCH_SOURCE_DIR).string(), text);
      found.insert(found.end(), here.begin(), here.end());
      ++files;
    }
  }
  EXPECT_GT(files, 40u) << "the rooms' sources were not found under " << TWINBENCH_SOURCE_DIR;
  EXPECT_EQ(found, std::vector<std::string>{});
}

TEST(SansIo, TheCheckerFindsEachKindOfBreach) {
  const std::string file =
      "#include <boost/asio/ip/address.hpp>\n"
      "#include <boost/beast/http.hpp>\n"
      "#include <ns3/node.h>\n"
      "#include <sys/socket.h>\n"
      "#include <thread>\n"
      "auto t = std::chrono::steady_clock::now();\n"
      "std::thread worker;\n"
      "// std::thread in a comment is fine\n"
      "#include <boost/beast/http/parser.hpp>\n";
  const auto found = violations("f.cpp", file);
  ASSERT_EQ(found.size(), 7u) << ::testing::PrintToString(found);
  EXPECT_EQ(found[0], "f.cpp:1: Asio (#include <boost/asio/ip/address.hpp>)");
  EXPECT_EQ(found[6], "f.cpp:7: a thread (std::thread worker;)");
}

}  // namespace
}  // namespace tb
