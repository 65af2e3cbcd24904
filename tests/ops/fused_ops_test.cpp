// The fused ops of the training path against their unfused definitions: add_layer_norm is
// layer_norm(add(a, b)) and relu_dropout is dropout(relu(x)), values and gradients bit for bit
// (so PyTorch parity of layer_norm, add, relu and dropout carries over); linear_dropout is
// dropout(linear) and relu_dropout(linear) up to the rounding of the bias; dropout's bit mask
// against the stream's definition; plus finite-difference gradient checks of each.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "attn/error.h"
#include "attn/ops.h"
#include "attn/ops/add_layer_norm.h"
#include "attn/ops/linear_dropout.h"
#include "attn/ops/relu_dropout.h"
#include "gradcheck.h"

namespace attn {
namespace {

using testing::grad_check;
using testing::random_tensor;
using In = std::vector<Var>;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  std::vector<float> x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(x[i]) - y[i]));
  return m;
}

// Runs f on fresh leaves made from `inputs`, backward from dout; returns the output and the
// gradient of every input.
std::vector<Tensor> run(const std::vector<Tensor>& inputs, const Tensor& dout,
                        const std::function<Var(const In&)>& f) {
  In vars;
  for (const Tensor& t : inputs) vars.emplace_back(t.clone(), true);
  Tape tape;
  std::vector<Tensor> out;
  {
    TapeScope scope(tape);
    Var y = f(vars);
    tape.backward(y, dout);
    out.push_back(y.value());
  }
  for (const Var& v : vars) out.push_back(v.grad());
  return out;
}

void expect_identical(const char* what, const std::vector<Tensor>& fused, const std::vector<Tensor>& plain) {
  ASSERT_EQ(fused.size(), plain.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    double d = max_abs_diff(fused[i], plain[i]);
    std::printf("[fused] %-16s %s max|diff| %.1e (tolerance 0)\n", what, i ? "gradient" : "output  ", d);
    EXPECT_EQ(d, 0.0) << what << " tensor " << i;
  }
}

TEST(AddLayerNorm, SameAsAddThenLayerNorm) {
  // 37 rows of 100: row counts and widths off the vector length; large enough to go parallel.
  Tensor a = random_tensor({37, 100}, 1, 2.0f), b = random_tensor({37, 100}, 2, 1.0f);
  Tensor g = random_tensor({100}, 3), beta = random_tensor({100}, 4);
  Tensor dout = random_tensor({37, 100}, 5);
  auto fused = run({a, b, g, beta}, dout, [](const In& x) { return add_layer_norm(x[0], x[1], x[2], x[3]); });
  auto plain = run({a, b, g, beta}, dout,
                   [](const In& x) { return layer_norm(add(x[0], x[1]), x[2], x[3]); });
  expect_identical("add_layer_norm", fused, plain);
}

TEST(AddLayerNorm, GradCheck) {
  Tensor a = random_tensor({3, 2, 6}, 6, 2.0f), b = random_tensor({3, 2, 6}, 7);
  Tensor g = random_tensor({6}, 8), beta = random_tensor({6}, 9);
  EXPECT_LE(grad_check("add_layer_norm", {a, b, g, beta},
                       [](const In& x) { return add_layer_norm(x[0], x[1], x[2], x[3]); }), 1.0);
  // One Var on both sides: LN(2x), its gradient arriving twice.
  EXPECT_LE(grad_check("add_layer_norm(x, x)", {a, g, beta},
                       [](const In& x) { return add_layer_norm(x[0], x[0], x[1], x[2]); }), 1.0);
}

TEST(AddLayerNorm, AccumulatesIntoExistingGradients) {
  // x feeds both the sub-layer and the residual, as in the encoder: y = LN(x + 3x).
  Tensor x = random_tensor({4, 8}, 10), g = random_tensor({8}, 11), beta = random_tensor({8}, 12);
  Tensor dout = random_tensor({4, 8}, 13);
  auto fused = run({x, g, beta}, dout,
                   [](const In& v) { return add_layer_norm(v[0], scale(v[0], 3.0f), v[1], v[2]); });
  auto plain = run({x, g, beta}, dout,
                   [](const In& v) { return layer_norm(add(v[0], scale(v[0], 3.0f)), v[1], v[2]); });
  expect_identical("residual", fused, plain);
}

TEST(AddLayerNorm, RejectsShapeMismatch) {
  Var a(Tensor::zeros({2, 4})), b(Tensor::zeros({4})), g(Tensor::zeros({4})), beta(Tensor::zeros({4}));
  EXPECT_THROW(add_layer_norm(a, b, g, beta), Error);
}

TEST(ReluDropout, SameAsDropoutOfRelu) {
  Tensor x = random_tensor({50, 333}, 14);  // 16650 elements: more than one parallel chunk
  Tensor dout = random_tensor({50, 333}, 15);
  Rng r1(77, 5), r2(77, 5);
  auto fused = run({x}, dout, [&](const In& v) { return relu_dropout(v[0], 0.3f, r1, true); });
  auto plain = run({x}, dout, [&](const In& v) { return dropout(relu(v[0]), 0.3f, r2, true); });
  expect_identical("relu_dropout", fused, plain);
  EXPECT_EQ(r1.counter, r2.counter);
  // Evaluation: plain ReLU, no numbers drawn.
  Rng r3(77);
  Var y = relu_dropout(Var(x), 0.3f, r3, false);
  EXPECT_EQ(max_abs_diff(y.value(), relu(Var(x)).value()), 0.0);
  EXPECT_EQ(r3.counter, 0u);
}

TEST(DropoutMask, MatchesTheStreamDefinition) {
  // The vectorised mask against dropout_uniform's definition, element by element: an odd start
  // and length exercise the 8-lane body and the scalar tail.
  const int64_t n = 1003;
  const uint64_t seed = 99, first = 12345;
  const float p = 0.25f, keep = 1.0f / (1.0f - p);
  std::vector<float> mask(n);
  dropout_mask(mask.data(), n, p, seed, first);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    wrong += mask[i] != (dropout_uniform(seed, first + static_cast<uint64_t>(i)) < p ? 0.0f : keep);
  EXPECT_EQ(wrong, 0);
}

TEST(DropoutMask, AcrossTheCountersHighHalf) {
  // Words whose numbers straddle k = 2^32 (the 32-bit key changes there) and a stream that starts
  // past it: element by element against the definition.
  const float p = 0.5f, keep = 2.0f;
  for (const uint64_t first : {(uint64_t{1} << 32) - 45, (uint64_t{3} << 32) + 7}) {
    const int64_t n = 200;
    std::vector<float> mask(n);
    dropout_mask(mask.data(), n, p, 4, first);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
      wrong += mask[i] != (dropout_uniform(4, first + static_cast<uint64_t>(i)) < p ? 0.0f : keep);
    EXPECT_EQ(wrong, 0) << "first " << first;
  }
}

TEST(ReluDropout, GradCheck) {
  // Inputs kept at least 0.1 from the kink at 0 (the finite-difference step is 0.01).
  Tensor x = random_tensor({4, 5}, 16);
  for (int64_t i = 0; i < x.numel(); ++i) {
    float& v = x.data<float>()[i];
    v = v < 0 ? v - 0.1f : v + 0.1f;
  }
  EXPECT_LE(grad_check("relu_dropout", {x}, [](const In& v) {
              Rng rng(42);  // the same mask on every call
              return relu_dropout(v[0], 0.3f, rng, true);
            }), 1.0);
}

TEST(Dropout, MatchesTheStreamDefinition) {
  // dropout keeps one bit per element; its value and gradient against u_i >= p element by element.
  // 9000 elements: two full 4096-element rows of the flat split and a short one, an odd tail word.
  const float p = 0.2f, keep = 1.0f / (1.0f - p);
  Tensor x = random_tensor({9, 1000}, 21), dout = random_tensor({9, 1000}, 22);
  Rng rng(31, 7);
  auto got = run({x}, dout, [&](const In& v) { return dropout(v[0], p, rng, true); });
  EXPECT_EQ(rng.counter, 7u + 9000u);
  int64_t wrong = 0, kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool k = dropout_uniform(31, 7 + static_cast<uint64_t>(i)) >= p;
    kept += k;
    wrong += got[0].data<float>()[i] != (k ? x.data<float>()[i] * keep : 0.0f);
    wrong += got[1].data<float>()[i] != (k ? dout.data<float>()[i] * keep : 0.0f);
  }
  std::printf("[fused] dropout p=0.2: %ld of 9000 kept, %ld wrong values or gradients\n", static_cast<long>(kept),
              static_cast<long>(wrong));
  EXPECT_EQ(wrong, 0);
}

// linear_dropout against the ops it fuses, on [150, 37] outputs (three 64-row blocks of the bias
// gradient's sums, 37 columns: a word and a 5-bit tail per row).
void expect_linear_dropout_as_unfused(bool relu) {
  Tensor x = random_tensor({3, 50, 29}, 41), W = random_tensor({37, 29}, 42), b = random_tensor({37}, 43);
  Tensor dout = random_tensor({3, 50, 37}, 44);
  Rng r1(55, 3), r2(55, 3);
  auto fused = run({x, W, b}, dout, [&](const In& v) { return linear_dropout(v[0], v[1], v[2], relu, 0.3f, r1, true); });
  auto plain = run({x, W, b}, dout, [&](const In& v) {
    Var z = linear(v[0], v[1], v[2]);
    return relu ? relu_dropout(z, 0.3f, r2, true) : dropout(z, 0.3f, r2, true);
  });
  EXPECT_EQ(r1.counter, r2.counter);
  const char* names[] = {"output", "dx", "dW", "db"};
  for (size_t i = 0; i < fused.size(); ++i) {
    double d = max_abs_diff(fused[i], plain[i]);
    std::printf("[fused] linear_dropout%s %-6s max|diff| %.1e (tolerance 1e-5)\n", relu ? "(relu)" : "      ",
                names[i], d);
    EXPECT_LT(d, 1e-5) << names[i];
  }
}

TEST(LinearDropout, SameAsDropoutOfLinear) { expect_linear_dropout_as_unfused(false); }
TEST(LinearDropout, SameAsReluDropoutOfLinear) { expect_linear_dropout_as_unfused(true); }

TEST(LinearDropout, EvaluationIsLinear) {
  Tensor x = random_tensor({4, 6}, 45), W = random_tensor({5, 6}, 46), b = random_tensor({5}, 47);
  Rng rng(1);
  EXPECT_EQ(max_abs_diff(linear_dropout(Var(x), Var(W), Var(b), false, 0.3f, rng, false).value(),
                         linear(Var(x), Var(W), Var(b)).value()), 0.0);
  EXPECT_EQ(max_abs_diff(linear_dropout(Var(x), Var(W), Var(b), true, 0.3f, rng, false).value(),
                         linear_relu(Var(x), Var(W), Var(b)).value()), 0.0);
  EXPECT_EQ(rng.counter, 0u);
}

TEST(LinearDropout, GradCheck) {
  Tensor x = random_tensor({3, 4}, 48), W = random_tensor({5, 4}, 49), b = random_tensor({5}, 50);
  for (bool relu : {false, true}) {
    EXPECT_LE(grad_check(relu ? "linear_dropout(relu)" : "linear_dropout", {x, W, b}, [relu](const In& v) {
                Rng rng(42);  // the same mask on every call
                return linear_dropout(v[0], v[1], v[2], relu, 0.3f, rng, true);
              }), 1.0);
  }
}

}  // namespace
}  // namespace attn
