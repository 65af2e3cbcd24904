#include "attn/data/classification_metrics.h"

#include <algorithm>
#include <cstdio>

#include "attn/error.h"

namespace attn::data {

ClassificationReport classification_report(const std::vector<int32_t>& truth, const std::vector<int32_t>& predicted,
                                           int64_t classes) {
  check(truth.size() == predicted.size(), "classification_report: ", truth.size(), " labels but ",
        predicted.size(), " predictions");
  ClassificationReport r;
  r.confusion.assign(static_cast<size_t>(classes), std::vector<int64_t>(static_cast<size_t>(classes), 0));
  for (size_t i = 0; i < truth.size(); ++i) {
    check(truth[i] >= 0 && truth[i] < classes && predicted[i] >= 0 && predicted[i] < classes,
          "classification_report: class id out of range at row ", i);
    r.confusion[truth[i]][predicted[i]] += 1;
  }
  r.total = static_cast<int64_t>(truth.size());
  int64_t correct = 0;
  for (int64_t c = 0; c < classes; ++c) {
    int64_t tp = r.confusion[c][c], in_row = 0, in_col = 0;
    for (int64_t k = 0; k < classes; ++k) {
      in_row += r.confusion[c][k];
      in_col += r.confusion[k][c];
    }
    ClassMetrics m;
    m.support = in_row;
    m.precision = in_col ? static_cast<double>(tp) / in_col : 0.0;
    m.recall = in_row ? static_cast<double>(tp) / in_row : 0.0;
    m.f1 = m.precision + m.recall > 0 ? 2 * m.precision * m.recall / (m.precision + m.recall) : 0.0;
    r.classes.push_back(m);
    r.macro_f1 += m.f1 / static_cast<double>(classes);
    correct += tp;
  }
  r.accuracy = r.total ? static_cast<double>(correct) / r.total : 0.0;
  return r;
}

std::string format_report(const ClassificationReport& r, const std::vector<std::string>& labels) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "accuracy %.4f  macro-F1 %.4f  (%lld texts)\n\n", r.accuracy, r.macro_f1,
                static_cast<long long>(r.total));
  out += line;
  size_t w = 5;
  for (const auto& l : labels) w = std::max(w, l.size());
  std::snprintf(line, sizeof line, "%-*s  precision  recall     F1  support\n", static_cast<int>(w), "class");
  out += line;
  for (size_t c = 0; c < r.classes.size(); ++c) {
    const ClassMetrics& m = r.classes[c];
    std::snprintf(line, sizeof line, "%-*s  %9.4f  %6.4f  %6.4f  %7lld\n", static_cast<int>(w), labels[c].c_str(),
                  m.precision, m.recall, m.f1, static_cast<long long>(m.support));
    out += line;
  }
  out += "\nconfusion matrix (rows: true class, columns: predicted)\n";
  std::snprintf(line, sizeof line, "%-*s", static_cast<int>(w), "");
  out += line;
  for (const auto& l : labels) {
    std::snprintf(line, sizeof line, " %*s", static_cast<int>(std::max<size_t>(l.size(), 6)), l.c_str());
    out += line;
  }
  out += "\n";
  for (size_t t = 0; t < r.confusion.size(); ++t) {
    std::snprintf(line, sizeof line, "%-*s", static_cast<int>(w), labels[t].c_str());
    out += line;
    for (size_t p = 0; p < r.confusion.size(); ++p) {
      std::snprintf(line, sizeof line, " %*lld", static_cast<int>(std::max<size_t>(labels[p].size(), 6)),
                    static_cast<long long>(r.confusion[t][p]));
      out += line;
    }
    out += "\n";
  }
  return out;
}

}  // namespace attn::data
