// Classification metrics: the confusion matrix and what is read from it (accuracy, per-class
// precision / recall / F1, macro-F1: the unweighted mean of the per-class F1, as scikit-learn's
// f1_score(average="macro"); a class never predicted has precision 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

struct ClassMetrics {
  double precision = 0, recall = 0, f1 = 0;
  int64_t support = 0;  // rows whose true class this is
};

struct ClassificationReport {
  std::vector<std::vector<int64_t>> confusion;  // [true][predicted]
  std::vector<ClassMetrics> classes;
  double accuracy = 0, macro_f1 = 0;
  int64_t total = 0;
};

ClassificationReport classification_report(const std::vector<int32_t>& truth, const std::vector<int32_t>& predicted,
                                           int64_t classes);

// The report as a person reads it: accuracy, macro-F1, a P/R/F1 table and the confusion matrix.
std::string format_report(const ClassificationReport& r, const std::vector<std::string>& labels);

}  // namespace attn::data
