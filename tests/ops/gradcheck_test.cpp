// Finite-difference gradient checks, one per op (tolerances in gradcheck.h, printed per check).
#include "gradcheck.h"

#include "attn/ops.h"

namespace attn {
namespace {

using testing::grad_check;
using testing::random_tensor;
using In = std::vector<Var>;

TEST(GradCheck, BroadcastingArithmetic) {
  Tensor a = random_tensor({2, 3, 4}, 1), b = random_tensor({3, 1}, 2);
  Tensor pos = random_tensor({3, 1}, 3);
  for (int64_t i = 0; i < pos.numel(); ++i) pos.data<float>()[i] = 1.5f + pos.data<float>()[i];
  EXPECT_LE(grad_check("add (broadcast)", {a, b}, [](const In& x) { return add(x[0], x[1]); }), 1.0);
  EXPECT_LE(grad_check("sub (broadcast)", {a, b}, [](const In& x) { return sub(x[0], x[1]); }), 1.0);
  EXPECT_LE(grad_check("mul (broadcast)", {a, b}, [](const In& x) { return mul(x[0], x[1]); }), 1.0);
  EXPECT_LE(grad_check("div (broadcast)", {a, pos}, [](const In& x) { return div(x[0], x[1]); }), 1.0);
  EXPECT_LE(grad_check("scale", {a}, [](const In& x) { return scale(x[0], -2.5f); }), 1.0);
}

TEST(GradCheck, Activations) {
  Tensor a = random_tensor({3, 5}, 4, 2.0f);
  EXPECT_LE(grad_check("relu", {a}, [](const In& x) { return relu(x[0]); }), 1.0);
  EXPECT_LE(grad_check("gelu", {a}, [](const In& x) { return gelu(x[0]); }), 1.0);
  EXPECT_LE(grad_check("swish", {a}, [](const In& x) { return swish(x[0]); }), 1.0);
  EXPECT_LE(grad_check("tanh", {a}, [](const In& x) { return tanh(x[0]); }), 1.0);
  EXPECT_LE(grad_check("sigmoid", {a}, [](const In& x) { return sigmoid(x[0]); }), 1.0);
}

TEST(GradCheck, MaskedFill) {
  Tensor a = random_tensor({2, 3, 4}, 5);
  Tensor mask = Tensor::from_ids({0, 1, 0, 0, 0, 1, 1, 0}, {2, 1, 4});
  EXPECT_LE(grad_check("masked_fill", {a}, [&](const In& x) { return masked_fill(x[0], mask, -3.0f); }), 1.0);
}

TEST(GradCheck, Matmul) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor a = random_tensor(ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, 6);
      Tensor b = random_tensor(tb ? Shape{2, 5, 4} : Shape{2, 4, 5}, 7);
      Tensor b2 = random_tensor(tb ? Shape{5, 4} : Shape{4, 5}, 8);
      std::string tag = std::string(ta ? "T" : "N") + (tb ? "T" : "N");
      EXPECT_LE(grad_check("matmul batched " + tag, {a, b},
                           [=](const In& x) { return matmul(x[0], x[1], ta, tb); }), 1.0);
      EXPECT_LE(grad_check("matmul shared-b " + tag, {a, b2},
                           [=](const In& x) { return matmul(x[0], x[1], ta, tb); }), 1.0);
    }
  Tensor x = random_tensor({2, 3, 4}, 9), W = random_tensor({5, 4}, 10), b = random_tensor({5}, 11);
  EXPECT_LE(grad_check("linear", {x, W, b}, [](const In& v) { return linear(v[0], v[1], v[2]); }), 1.0);
}

TEST(GradCheck, SoftmaxAndLayerNorm) {
  Tensor a = random_tensor({3, 6}, 12, 2.0f);
  EXPECT_LE(grad_check("softmax", {a}, [](const In& x) { return softmax(x[0]); }), 1.0);
  EXPECT_LE(grad_check("log_softmax", {a}, [](const In& x) { return log_softmax(x[0]); }), 1.0);
  Tensor g = random_tensor({6}, 13), b = random_tensor({6}, 14);
  EXPECT_LE(grad_check("layer_norm", {a, g, b},
                       [](const In& x) { return layer_norm(x[0], x[1], x[2]); }), 1.0);
}

TEST(GradCheck, EmbeddingAndDropout) {
  Tensor table = random_tensor({7, 3}, 15);
  Tensor ids = Tensor::from_ids({1, 4, 1, 6, 0, 4}, {2, 3});
  EXPECT_LE(grad_check("embedding", {table}, [&](const In& x) { return embedding(x[0], ids); }), 1.0);
  Tensor a = random_tensor({4, 5}, 16);
  EXPECT_LE(grad_check("dropout", {a}, [](const In& x) {
              Rng rng(42);  // the same mask on every call
              return dropout(x[0], 0.3f, rng, true);
            }), 1.0);
}

TEST(GradCheck, ShapeOps) {
  Tensor a = random_tensor({2, 3, 4}, 17), b = random_tensor({2, 2, 4}, 18);
  EXPECT_LE(grad_check("reshape", {a}, [](const In& x) { return reshape(x[0], {6, -1}); }), 1.0);
  EXPECT_LE(grad_check("transpose", {a}, [](const In& x) { return transpose(x[0], 0, 2); }), 1.0);
  EXPECT_LE(grad_check("slice", {a}, [](const In& x) { return slice(x[0], 1, 1, 3); }), 1.0);
  EXPECT_LE(grad_check("concat", {a, b}, [](const In& x) { return concat({x[0], x[1]}, 1); }), 1.0);
  EXPECT_LE(grad_check("split", {a}, [](const In& x) {
              auto parts = split(x[0], {1, 2}, 1);
              return concat({scale(parts[1], 2.0f), parts[0]}, 1);
            }), 1.0);
}

TEST(GradCheck, Reductions) {
  Tensor a = random_tensor({2, 3, 4}, 19);
  EXPECT_LE(grad_check("sum", {a}, [](const In& x) { return sum(x[0]); }), 1.0);
  EXPECT_LE(grad_check("mean", {a}, [](const In& x) { return mean(x[0]); }), 1.0);
  EXPECT_LE(grad_check("sum(dim 1)", {a}, [](const In& x) { return sum(x[0], 1); }), 1.0);
  EXPECT_LE(grad_check("mean(dim -1, keepdim)", {a}, [](const In& x) { return mean(x[0], -1, true); }), 1.0);
}

TEST(GradCheck, CrossEntropy) {
  Tensor z = random_tensor({5, 7}, 20, 2.0f);
  Tensor t = Tensor::from_ids({3, 0, 6, 0, 2}, {5});
  EXPECT_LE(grad_check("cross_entropy", {z}, [&](const In& x) { return cross_entropy(x[0], t); }), 1.0);
  EXPECT_LE(grad_check("cross_entropy smooth+ignore", {z},
                       [&](const In& x) { return cross_entropy(x[0], t, 0.1f, 0); }), 1.0);
}

TEST(GradCheck, Attention) {
  Tensor q = random_tensor({2, 2, 3, 4}, 21), k = random_tensor({2, 2, 5, 4}, 22),
         v = random_tensor({2, 2, 5, 3}, 23);
  AttentionMask pad{Tensor::from_ids({0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, {2, 5}), false};
  EXPECT_LE(grad_check("attention padding", {q, k, v}, [&](const In& x) {
              return scaled_dot_product_attention(x[0], x[1], x[2], pad);
            }), 1.0);
  Tensor qs = random_tensor({2, 2, 5, 4}, 24);
  AttentionMask causal{Tensor(), true};
  EXPECT_LE(grad_check("attention causal", {qs, k, v}, [&](const In& x) {
              return scaled_dot_product_attention(x[0], x[1], x[2], causal);
            }), 1.0);
  EXPECT_LE(grad_check("attention dropout", {q, k, v}, [&](const In& x) {
              Rng rng(7);
              AttentionOptions o;
              o.dropout = 0.25f;
              o.rng = &rng;
              return scaled_dot_product_attention(x[0], x[1], x[2], pad, o);
            }), 1.0);
}

}  // namespace
}  // namespace attn
