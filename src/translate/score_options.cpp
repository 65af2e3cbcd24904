#include "attn/translate/score_options.h"

namespace attn {
namespace {

std::vector<ScoreOptionField> make_fields() {
  std::vector<ScoreOptionField> f(1);
  f[0].key = "max_batch_size";
  f[0].flag = "--batch";
  f[0].min = 1;
  f[0].max = 65536;
  f[0].front_ends = kCli | kPython;
  f[0].help = "sentence pairs scored together";
  f[0].slot = [](ScoreOptions& o) { return &o.batch; };
  return f;
}

}  // namespace

const std::vector<ScoreOptionField>& score_option_fields() {
  static const std::vector<ScoreOptionField> fields = make_fields();
  return fields;
}

const ScoreOptionField& score_option(const std::string& key) {
  for (const ScoreOptionField& f : score_option_fields())
    if (f.key == key) return f;
  fail("no scoring option '", key, "'");
}

}  // namespace attn
