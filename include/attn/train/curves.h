// Training curves: a run's train_log.jsonl (progress.h writes it: "train" lines with loss, lr and
// throughput, "valid" lines with the dev figures) read into series, and drawn as a self-contained
// SVG (no script, no font or style fetched) with one panel per figure and one colour per run, so
// several runs compare on one picture. `attn plot` draws it; training writes model_dir/curves.svg.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct CurvePoint {
  double step = 0, elapsed = 0, value = 0;  // elapsed: seconds on the run's clock
};

// The figures of one run. Series keys: loss, dev_loss, dev_bleu, dev_chrf, dev_accuracy (percent),
// lr, tokens_per_s, samples_per_s. A resumed run logs again the steps after its checkpoint; the
// later lines replace the earlier ones, so each series rises in step.
struct RunCurves {
  std::string name;
  std::map<std::string, std::vector<CurvePoint>> series;
};

// Reads log text. A line that is not a JSON object with an "event" is left out and named in
// `warnings` as "name:LINE: reason" (a run killed mid-write may leave one); events other than
// "train" and "valid" are ignored, and so are figures that are null (not finite).
RunCurves parse_train_log(std::string_view text, const std::string& name, std::vector<std::string>& warnings);

// The log of a run directory (DIR/train_log.jsonl) or a log file itself; errors name the path.
RunCurves read_train_log(const std::string& dir_or_file, const std::string& name, std::vector<std::string>& warnings);

enum class CurveAxis { step, time };

// The picture: a legend of the runs, then a panel per figure any run has, against `x`.
std::string curves_svg(const std::vector<RunCurves>& runs, CurveAxis x);
// The same SVG inline in an HTML page.
std::string curves_html(const std::vector<RunCurves>& runs, CurveAxis x);

// Writes model_dir/curves.svg (atomically) from model_dir/train_log.jsonl. Training calls it at the
// end of a run; a problem is reported on stderr and never ends the run.
void write_training_curves(const std::string& model_dir);

}  // namespace attn
