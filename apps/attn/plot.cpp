// attn plot RUN_DIR [RUN_DIR...] [--output curves.svg|curves.html] [--x step|time]: the training
// curves of one or more runs (their train_log.jsonl) on one self-contained picture.
#include <cstdio>
#include <filesystem>

#include "args.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/train/curves.h"

namespace attn::cli {
namespace {

// A run's name in the legend: its directory as given, without a trailing '/' or train_log.jsonl.
std::string run_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string log = "/train_log.jsonl";
  if (path.size() > log.size() && path.compare(path.size() - log.size(), log.size(), log) == 0)
    path.resize(path.size() - log.size());
  return path;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

int run_plot(int argc, char** argv) {
  CLI::App args{"Draws the training curves of one or more runs (loss, dev loss, dev BLEU/chrF or\n"
                "accuracy, learning rate, throughput) from their train_log.jsonl, against the step or\n"
                "the time, one colour per run. The picture is self-contained: an SVG file, or an HTML\n"
                "page with the SVG inline (--output ending in .html); nothing is fetched. Lines of a log\n"
                "that cannot be read (a run killed mid-write) are left out and named on stderr.",
                "attn plot"};
  describe(args, "attn plot runs/ende runs/ende-big --output curves.html");
  std::vector<std::string> dirs;
  std::string output = "curves.svg", x_axis = "step";
  args.add_option("RUN_DIR", dirs, "run directories (or train_log.jsonl files)")->required();
  add_text(args, "--output", output, "the picture to write: .svg or .html (default curves.svg)");
  args.add_option("--x", x_axis, "the horizontal axis: step or time (default step)")
      ->check(CLI::IsMember({"step", "time"}));
  if (!parse(args, argc, argv)) return 0;
  const bool html = ends_with(output, ".html") || ends_with(output, ".htm");
  check(html || ends_with(output, ".svg"), "--output ", output, ": the name must end in .svg or .html");
  std::vector<RunCurves> runs;
  std::vector<std::string> warnings;
  for (const std::string& d : dirs) runs.push_back(read_train_log(d, run_name(d), warnings));
  for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const CurveAxis x = x_axis == "time" ? CurveAxis::time : CurveAxis::step;
  io::write_file_atomic(output, html ? curves_html(runs, x) : curves_svg(runs, x));
  size_t points = 0;
  for (const RunCurves& r : runs)
    for (const auto& [key, s] : r.series) points += s.size();
  std::fprintf(stderr, "wrote %s: %zu run%s, %zu points\n", output.c_str(), runs.size(), runs.size() == 1 ? "" : "s",
               points);
  return 0;
}

}  // namespace attn::cli
