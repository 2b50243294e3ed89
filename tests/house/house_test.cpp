// The house drawn from the code, against the one docs/architecture.md draws: each folder's
// CMake links and "twinbench/<folder>/" includes reach only folders its row of the layers table
// lets it depend on (directly or through them), every such arrow points up the table (so there is
// no cycle), every folder has its row and a README that says what it owns, and no folder holds
// over a fifth of the program's code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/child_process.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = TWINBENCH_SOURCE_DIR;


// The layers table: each folder in its row order with the folders its "may depend on" cell names
// ("everything below" for app/: every folder above it).
struct Layers {
  std::vector<std::string> order;
  std::map<std::string, std::set<std::string>> allowed;
};

Layers layers_from_architecture_doc() {
  Layers layers;
  std::istringstream doc(testing::file_text(kSource / "docs/architecture.md"));
  const std::regex row(R"(^\| `([a-z0-9_]+)/` \([^)]*\) \|.*\| ([^|]*) \|$)");
  for (std::string line; std::getline(doc, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    const std::string folder = m[1], may = m[2];
    for (const std::string& above : layers.order)
      if (may.find("everything below") != std::string::npos ||
          std::regex_search(may, std::regex("(^|[^a-z0-9_])" + above + "($|[^a-z0-9_])")))
        layers.allowed[folder].insert(above);
    layers.order.push_back(folder);
  }
  return layers;
}

// The program's folders: those with a CMakeLists.txt that defines a tb_ library.
std::vector<std::string> code_folders() {
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(kSource)) {
    const fs::path cmake = entry.path() / "CMakeLists.txt";
    if (entry.is_directory() && fs::exists(cmake) && entry.path().filename() != "tests" &&
        testing::file_text(cmake).find("add_library(tb_") != std::string::npos)
      folders.push_back(entry.path().filename().string());
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

std::vector<fs::path> sources_of(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / folder)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".cpp" || ext == ".hpp")) files.push_back(entry.path());
  }
  return files;
}

// Folder -> the folders it reaches: "twinbench/<folder>/" includes and tb_ libraries it links.
std::map<std::string, std::set<std::string>> arrows(const std::vector<std::string>& folders) {
  std::map<std::string, std::string> folder_of_target;
  const std::regex library(R"(add_library\((tb_[a-z0-9_]+))");
  for (const std::string& folder : folders) {
    const std::string cmake = testing::file_text(kSource / folder / "CMakeLists.txt");
    for (std::sregex_iterator it(cmake.begin(), cmake.end(), library), end; it != end; ++it)
      folder_of_target[(*it)[1]] = folder;
  }
  std::map<std::string, std::set<std::string>> found;
  const std::regex include(R"re(#include "twinbench/([a-z0-9_]+)/)re");
  const std::regex link(R"(\btb_[a-z0-9_]+)");
  for (const std::string& folder : folders) {
    for (const fs::path& file : sources_of(folder)) {
      const std::string text = testing::file_text(file);
      for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it)
        if ((*it)[1] != folder) found[folder].insert((*it)[1]);
    }
    const std::string cmake = testing::file_text(kSource / folder / "CMakeLists.txt");
    const std::regex call(R"(target_link_libraries\(\s*\S+([^)]*)\))");  // past the target linked
    for (std::sregex_iterator c(cmake.begin(), cmake.end(), call), end; c != end; ++c) {
      const std::string links = (*c)[1];
      for (std::sregex_iterator it(links.begin(), links.end(), link); it != end; ++it) {
        const auto to = folder_of_target.find(it->str());
        if (to != folder_of_target.end() && to->second != folder) found[folder].insert(to->second);
      }
    }
  }
  return found;
}

std::set<std::string> reachable(const Layers& layers, const std::string& folder) {
  std::set<std::string> seen;
  std::vector<std::string> todo(layers.allowed.count(folder) ? 1 : 0, folder);
  while (!todo.empty()) {
    const std::string f = todo.back();
    todo.pop_back();
    if (!layers.allowed.count(f)) continue;
    for (const std::string& to : layers.allowed.at(f))
      if (seen.insert(to).second) todo.push_back(to);
  }
  return seen;
}

TEST(House, EveryArrowInTheCodeIsOneTheArchitectureDocAllows) {
  const Layers layers = layers_from_architecture_doc();
  ASSERT_GE(layers.order.size(), 10u) << "the layers table of docs/architecture.md was not read";
  const auto folders = code_folders();
  for (const std::string& folder : folders)
    EXPECT_NE(std::find(layers.order.begin(), layers.order.end(), folder), layers.order.end())
        << folder << "/ has no row in docs/architecture.md's layers table";
  for (const auto& [from, tos] : arrows(folders)) {
    const auto allowed = reachable(layers, from);
    for (const std::string& to : tos)
      EXPECT_TRUE(allowed.count(to)) << from << "/ uses " << to
                                     << "/, which docs/architecture.md does not let it depend on";
  }
}

TEST(House, TheDocsLayersPointOnlyUp) {
  const Layers layers = layers_from_architecture_doc();
  for (std::size_t i = 0; i < layers.order.size(); ++i)
    for (std::size_t j = i; j < layers.order.size(); ++j)
      EXPECT_FALSE(layers.allowed.count(layers.order[i]) &&
                   layers.allowed.at(layers.order[i]).count(layers.order[j]))
          << layers.order[i] << " may depend on " << layers.order[j] << ", below it";
}

TEST(House, EveryFolderSaysWhatItOwns) {
  for (const std::string& folder : code_folders()) {
    const fs::path readme = kSource / folder / "README.md";
    EXPECT_TRUE(fs::exists(readme)) << folder << "/README.md is missing";
    if (fs::exists(readme)) {
      EXPECT_GT(testing::file_text(readme).size(), 200u) << readme;
    }
  }
}

TEST(House, NoFolderHoldsOverAFifthOfTheCode) {
  std::map<std::string, std::size_t> lines;
  std::size_t total = 0;
  for (const std::string& folder : code_folders()) {
    for (const fs::path& file : sources_of(folder)) {
      const std::string text = testing::file_text(file);
      const auto n = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
      lines[folder] += n;
      total += n;
    }
  }
  ASSERT_GT(total, 10000u);
  for (const auto& [folder, n] : lines)
    EXPECT_LE(n * 5, total) << folder << "/ holds " << n << " of " << total << " lines";
}

}  // namespace
}  // namespace tb
