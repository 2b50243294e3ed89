#pragma once
// Plots through gnuplot: the data and script go to a temporary directory, each image is rendered
// beside its final name and renamed over it, so a reader never sees a partial plot. Without
// gnuplot the plot is skipped with a warning on stderr.
#include <filesystem>
#include <functional>
#include <string>

namespace tb::studies {

// A gnuplot single-quoted string: a quote inside is doubled.
std::string gnuplot_quoted(const std::string& text);

// Writes `data` to a file and renders DIR/STEM.png and DIR/STEM.svg with the script that
// `script(terminal, output, data_file)` returns (the last two already quoted).
void render_plot(
    const std::filesystem::path& dir, const std::string& stem, const std::string& data,
    const std::function<std::string(const std::string& terminal, const std::string& output,
                                    const std::string& data_file)>& script);

}  // namespace tb::studies
