// The seed-002 classifier against PyTorch (tests/classify/make_classifier_fixtures.py): logits,
// loss and every parameter gradient for the seed's head split and flatten head, the standard
// split, the padding mask, mean and [CLS] pooling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/classifier.h"
#include "attn/ops/loss.h"

namespace attn {
namespace {

const std::string kDir = std::string(ATTN_TEST_DATA) + "/classify/";

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  std::vector<float> x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) m = std::max(m, std::fabs(double(x[i]) - y[i]));
  return m;
}

TEST(ClassifierParity, LogitsLossAndEveryGradientMatchPyTorch) {
  std::ifstream f(kDir + "cases.json");
  nlohmann::json cases = nlohmann::json::parse(f);
  ASSERT_EQ(cases.size(), 5u);
  for (const auto& [name, cj] : cases.items()) {
    auto t = io::load_npz(kDir + name + ".npz");
    std::map<std::string, Tensor> params;
    for (const auto& [k, v] : t)
      if (k.rfind("p.", 0) == 0) params[k.substr(2)] = v;
    Classifier m = classifier_from_tensors(classifier_config_from_json(cj, name), params, name);
    Tape tape;
    TapeScope scope(tape);
    Var logits = classifier_logits(m, t.at("ids"), Context{});
    Var loss = cross_entropy(logits, t.at("labels"));
    tape.backward(loss);
    zero_pad_gradient(m);
    double d_logits = max_abs_diff(logits.value(), t.at("logits"));
    double d_loss = std::fabs(loss.value().data<float>()[0] - t.at("loss").data<float>()[0]);
    std::printf("%-17s logits max|diff| %.2e  loss |diff| %.2e  (tol 2e-6)\n", name.c_str(), d_logits, d_loss);
    EXPECT_LT(d_logits, 2e-6) << name;
    EXPECT_LT(d_loss, 2e-6) << name;
    double worst = 0;
    std::string worst_key;
    for (const auto& [key, v] : m.named) {
      ASSERT_TRUE(v.grad().defined()) << name << ": no gradient for " << key;
      double d = max_abs_diff(v.grad(), t.at("g." + key));
      if (d > worst) worst = d, worst_key = key;
      EXPECT_LT(d, 2e-6) << name << ": gradient of " << key;
    }
    std::printf("%-17s %zu gradients, worst max|diff| %.2e (%s)  (tol 2e-6)\n", name.c_str(), m.named.size(),
                worst, worst_key.c_str());
  }
}

TEST(ClassifierParity, SeedSplitDiffersFromStandardSplit) {
  // The two head splits are different functions: the fixtures' parameters under the other split
  // must give other logits (a guard against the option being ignored).
  std::ifstream f(kDir + "cases.json");
  nlohmann::json cases = nlohmann::json::parse(f);
  auto t = io::load_npz(kDir + "seed_flatten.npz");
  std::map<std::string, Tensor> params;
  for (const auto& [k, v] : t)
    if (k.rfind("p.", 0) == 0) params[k.substr(2)] = v;
  nlohmann::json cj = cases["seed_flatten"];
  cj["head_split"] = "standard";
  Classifier m = classifier_from_tensors(classifier_config_from_json(cj, "x"), params, "x");
  EXPECT_GT(max_abs_diff(classifier_logits(m, t.at("ids"), Context{}).value(), t.at("logits")), 1e-3);
}

TEST(ClassifierConfig, BadOptionsNameTheField) {
  ClassifierConfig c;
  EXPECT_THROW(classifier_config_from_json({{"pooling", "max"}}, "cfg.json"), Error);
  c.pooling = Pooling::mean;
  c.mask = true;
  c.head_split = HeadSplit::seed;
  try {
    c.validate();
    FAIL() << "mask with the seed split accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("head_split"), std::string::npos) << e.what();
  }
  EXPECT_THROW(classifier_config_from_json({{"pad_sise", 3}}, "cfg.json"), Error);
}

}  // namespace
}  // namespace attn
