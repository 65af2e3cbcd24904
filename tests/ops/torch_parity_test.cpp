// Every op's forward and backward against PyTorch on the fixtures of make_op_fixtures.py:
// outputs and the gradients of sum(out * dout). Each check prints max |diff| and its tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "attn/io/safetensors.h"
#include "attn/ops.h"

namespace attn {
namespace {

using In = std::vector<Var>;
constexpr double kTol = 2e-6;  // |attn - torch| <= kTol * (1 + |torch|), float32 throughout

double max_abs_diff(const Tensor& a, const Tensor& b, double* worst_ratio) {
  EXPECT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  if (a.shape() != b.shape()) return INFINITY;
  std::vector<float> x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = std::fabs(static_cast<double>(x[i]) - y[i]);
    m = std::max(m, d);
    *worst_ratio = std::max(*worst_ratio, d / (kTol * (1.0 + std::fabs(y[i]))));
  }
  return m;
}

// Loads <name>.safetensors, runs `f` on in0, in1, ... (float inputs require grad), backward
// from dout, and compares out and every gradN.
void check_op(const std::string& name, const std::function<Var(const In&, const std::vector<Tensor>&)>& f) {
  auto t = io::load_safetensors(std::string(ATTN_TEST_DATA) + "/ops/" + name + ".safetensors");
  std::vector<Tensor> raw;
  In vars;
  for (int i = 0; t.count("in" + std::to_string(i)); ++i) {
    Tensor x = t["in" + std::to_string(i)].clone();
    raw.push_back(x);
    vars.emplace_back(x, x.dtype() == DType::f32);
  }
  Tape tape;
  Var y;
  {
    TapeScope scope(tape);
    y = f(vars, raw);
    tape.backward(y, t["dout"]);
  }
  double ratio = 0;
  double d = max_abs_diff(y.value(), t["out"], &ratio);
  std::printf("[torch] %-28s out  max|diff| %.2e\n", name.c_str(), d);
  for (size_t i = 0; i < vars.size(); ++i) {
    std::string key = "grad" + std::to_string(i);
    if (!t.count(key)) continue;
    ASSERT_TRUE(vars[i].grad().defined()) << name << ": no gradient for input " << i;
    double dg = max_abs_diff(vars[i].grad(), t[key], &ratio);
    std::printf("[torch] %-28s %s max|diff| %.2e\n", name.c_str(), key.c_str(), dg);
  }
  EXPECT_LE(ratio, 1.0) << name << ": a difference exceeds " << kTol << " * (1 + |torch|)";
}

TEST(TorchParity, Arithmetic) {
  check_op("add", [](const In& x, auto&) { return add(x[0], x[1]); });
  check_op("sub", [](const In& x, auto&) { return sub(x[0], x[1]); });
  check_op("mul", [](const In& x, auto&) { return mul(x[0], x[1]); });
  check_op("div", [](const In& x, auto&) { return div(x[0], x[1]); });
  check_op("scale", [](const In& x, auto&) { return scale(x[0], -2.5f); });
  check_op("masked_fill", [](const In& x, auto& r) { return masked_fill(x[0], r[1], -3.0f); });
}

TEST(TorchParity, Activations) {
  check_op("relu", [](const In& x, auto&) { return relu(x[0]); });
  check_op("gelu", [](const In& x, auto&) { return gelu(x[0]); });
  check_op("tanh", [](const In& x, auto&) { return tanh(x[0]); });
  check_op("sigmoid", [](const In& x, auto&) { return sigmoid(x[0]); });
  check_op("swish", [](const In& x, auto&) { return swish(x[0]); });
}

TEST(TorchParity, Matmul) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      std::string tag = std::string(ta ? "T" : "N") + (tb ? "T" : "N");
      auto op = [=](const In& x, auto&) { return matmul(x[0], x[1], ta, tb); };
      check_op("matmul_batched_" + tag, op);
      check_op("matmul_shared_" + tag, op);
    }
  check_op("linear", [](const In& x, auto&) { return linear(x[0], x[1], x[2]); });
}

TEST(TorchParity, SoftmaxLayerNormEmbedding) {
  check_op("softmax", [](const In& x, auto&) { return softmax(x[0]); });
  check_op("log_softmax", [](const In& x, auto&) { return log_softmax(x[0]); });
  check_op("layer_norm", [](const In& x, auto&) { return layer_norm(x[0], x[1], x[2]); });
  check_op("embedding", [](const In& x, auto& r) { return embedding(x[0], r[1]); });
}

TEST(TorchParity, ShapeAndReduce) {
  check_op("reshape", [](const In& x, auto&) { return reshape(x[0], {6, -1}); });
  check_op("transpose", [](const In& x, auto&) { return transpose(x[0], 0, 2); });
  check_op("slice", [](const In& x, auto&) { return slice(x[0], 1, 1, 3); });
  check_op("concat", [](const In& x, auto&) { return concat({x[0], x[1]}, 1); });
  check_op("split", [](const In& x, auto&) {
    auto p = split(x[0], {1, 2}, 1);
    return concat({scale(p[1], 2.0f), p[0]}, 1);
  });
  check_op("sum", [](const In& x, auto&) { return sum(x[0]); });
  check_op("mean", [](const In& x, auto&) { return mean(x[0]); });
  check_op("sum_dim1", [](const In& x, auto&) { return sum(x[0], 1); });
  check_op("mean_dim_last_keep", [](const In& x, auto&) { return mean(x[0], -1, true); });
}

TEST(TorchParity, CrossEntropy) {
  check_op("cross_entropy", [](const In& x, auto& r) { return cross_entropy(x[0], r[1]); });
  check_op("cross_entropy_smooth_ignore",
           [](const In& x, auto& r) { return cross_entropy(x[0], r[1], 0.1f, 0); });
}

TEST(TorchParity, Attention) {
  check_op("attention_padding", [](const In& x, auto& r) {
    return scaled_dot_product_attention(x[0], x[1], x[2], AttentionMask{r[3], false});
  });
  check_op("attention_causal", [](const In& x, auto&) {
    return scaled_dot_product_attention(x[0], x[1], x[2], AttentionMask{Tensor(), true});
  });
  check_op("attention_causal_padding", [](const In& x, auto& r) {
    return scaled_dot_product_attention(x[0], x[1], x[2], AttentionMask{r[3], true});
  });
}

}  // namespace
}  // namespace attn
