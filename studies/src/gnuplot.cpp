#include "twinbench/studies/gnuplot.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "twinbench/scenario/report.hpp"

namespace tb::studies {

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

void render_plot(const std::filesystem::path& dir, const std::string& stem, const std::string& data,
                 const std::function<std::string(const std::string&, const std::string&,
                                                 const std::string&)>& script) {
  namespace fs = std::filesystem;
  const fs::path work = fs::temp_directory_path() / fmt::format("twinbench-plot-{}", ::getpid());
  fs::create_directories(work);
  scenario::write_file_atomically(work / "cells.dat", data);
  const std::string data_file = gnuplot_quoted((work / "cells.dat").string());
  for (const auto& [terminal, extension] :
       {std::pair{"pngcairo size 900,800", "png"}, std::pair{"svg size 900,800", "svg"}}) {
    const fs::path target = dir / fmt::format("{}.{}", stem, extension);
    const fs::path partial = dir / fmt::format(".{}.{}.partial", stem, extension);
    scenario::write_file_atomically(work / "plot.gp",
                                    script(terminal, gnuplot_quoted(partial.string()), data_file));
    const std::string command = fmt::format("gnuplot '{}' 2>'{}'", (work / "plot.gp").string(),
                                            (work / "gnuplot.log").string());
    if (std::system(command.c_str()) != 0) {
      std::fprintf(stderr,
                   "warning: gnuplot failed or is missing; no %s plot (see scripts/setup.sh)\n",
                   extension);
      fs::remove(partial);
      continue;
    }
    fs::rename(partial, target);
  }
  fs::remove_all(work);
}

}  // namespace tb::studies
