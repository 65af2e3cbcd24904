#include "attn/classify/options.h"

#include <algorithm>

namespace attn {
namespace {

std::vector<ClassifyOptionField> make_fields() {
  std::vector<ClassifyOptionField> f(2);
  f[0].key = "top_k";
  f[0].flag = "--top-k";
  f[0].min = 1;
  f[0].max = kMaxTopK;
  f[0].help = "the K most probable labels of each text, most probable first (above the model's labels: all of them)";
  f[0].slot = [](ClassifyOptions& o) { return &o.top_k; };
  // The server batches the texts of its requests itself (attn serve --max-batch-tokens): no field.
  f[1].key = "max_batch_size";
  f[1].flag = "--batch";
  f[1].min = 1;
  f[1].max = 65536;
  f[1].front_ends = kCli | kPython;
  f[1].help = "texts per forward pass";
  f[1].slot = [](ClassifyOptions& o) { return &o.batch; };
  return f;
}

}  // namespace

const std::vector<ClassifyOptionField>& classify_option_fields() {
  static const std::vector<ClassifyOptionField> fields = make_fields();
  return fields;
}

const ClassifyOptionField& classify_option(const std::string& key) {
  for (const ClassifyOptionField& f : classify_option_fields())
    if (f.key == key) return f;
  fail("no classification option '", key, "'");
}

const ClassifyOptionField* find_classify_option(const std::string& name, unsigned front_end) {
  return find_whole_option(classify_option_fields(), name, front_end);
}

int64_t labels_per_text(const ClassifyOptions& o, int64_t labels) { return std::min(o.top_k, labels); }

}  // namespace attn
