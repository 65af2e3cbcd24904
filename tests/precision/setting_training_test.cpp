// The precision setting (default fp32, scopes, names) and a few Adam steps of a small
// Transformer in bf16 against the same steps in f32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/precision.h"
#include "attn/models/transformer.h"
#include "attn/ops/loss.h"
#include "attn/ops/matmul.h"
#include "attn/tensor/random.h"
#include "attn/train/adam.h"

namespace attn {
namespace {

TEST(PrecisionTest, SettingDefaultsFormsAndNames) {
  // No ambient precision: a weight's form says how its products run, fp32 unless prepared.
  const WeightForm plain;
  EXPECT_EQ(plain.precision, Precision::fp32);
  EXPECT_EQ(plain.frozen, nullptr);
  const WeightForm trained = training_form(Precision::bf16);
  EXPECT_EQ(trained.precision, Precision::bf16);
  EXPECT_EQ(trained.frozen, nullptr) << "a trained weight changes: nothing is converted ahead";
  const Tensor W = Tensor::zeros({8, 16});
  const WeightForm frozen = inference_form(W, Precision::int8);
  EXPECT_EQ(frozen.precision, Precision::int8);
  EXPECT_NE(frozen.frozen, nullptr);
  Precision other = Precision::fp32;
  std::thread([&] { other = frozen.precision; }).join();
  EXPECT_EQ(other, Precision::int8) << "a form is the same from every thread";
  for (Precision p : {Precision::fp32, Precision::bf16, Precision::int8})
    EXPECT_EQ(parse_precision(precision_name(p)), p);
  EXPECT_THROW(parse_precision("fp16", "train.precision"), Error);
  try {
    parse_precision("half", "train.precision");
    ADD_FAILURE() << "\"half\" was accepted as a precision";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.precision"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("half"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_precision_list("fp32,bf16,int8"),
            (std::vector<Precision>{Precision::fp32, Precision::bf16, Precision::int8}));
  EXPECT_EQ(parse_precision_list("bf16"), std::vector<Precision>{Precision::bf16});
  EXPECT_THROW(parse_precision_list("fp32,", "bench --precision"), Error);  // an empty name
}

TEST(PrecisionTest, TrainingPrecisionAutoFollowsTheCpu) {
  // What oneDNN detects must agree with the kernel's CPU flags (avx512_bf16 or amx_bf16 in /proc/cpuinfo).
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string flags;
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) {
      flags = line + " ";
      break;
    }
  const bool listed = flags.find(" avx512_bf16 ") != std::string::npos || flags.find(" amx_bf16 ") != std::string::npos;
  const bool native = cpu_has_native_bf16();
  std::printf("cpu_has_native_bf16: %d, /proc/cpuinfo lists bf16: %d\n", native ? 1 : 0, listed ? 1 : 0);
  if (!flags.empty()) {
    EXPECT_EQ(native, listed);
  }
  // auto picks bf16 exactly when the CPU multiplies it natively.
  EXPECT_EQ(parse_training_precision("auto"), native ? Precision::bf16 : Precision::fp32);
  EXPECT_EQ(parse_training_precision("fp32"), Precision::fp32);
  EXPECT_EQ(parse_training_precision("bf16"), Precision::bf16);
  EXPECT_THROW(parse_training_precision("int8"), Error);  // inference only
  EXPECT_THROW(parse_training_precision("fp16"), Error);
}

// fp32's training form is the default product to the bit. Its inference form is too wherever it
// multiplies W itself (one row, and every row count without AVX-512); where the dispatch table
// gives it W packed once (f32_packed_for), the sums run in another order: within float rounding.
TEST(PrecisionTest, Fp32FormsAreBitIdenticalToDefault) {
  for (int64_t rows : {1, 9, 40}) {
    Tensor x = Tensor::empty({rows, 40}), W = Tensor::empty({24, 40}), b = Tensor::empty({24});
    Rng rng(3);
    fill_normal(x, 0, 1, rng);
    fill_normal(W, 0, 1, rng);
    fill_normal(b, 0, 1, rng);
    std::vector<float> plain = linear(Var(x), Var(W), Var(b)).value().to_vector();
    EXPECT_EQ(linear(Var(x), Var(W), Var(b), training_form(Precision::fp32)).value().to_vector(), plain);
    std::vector<float> inference = linear(Var(x), Var(W), Var(b), inference_form(W, Precision::fp32)).value().to_vector();
    if (!f32_packed_for(rows)) {
      EXPECT_EQ(inference, plain) << rows << " rows";
      continue;
    }
    ASSERT_EQ(inference.size(), plain.size());
    for (size_t i = 0; i < plain.size(); ++i)
      EXPECT_NEAR(inference[i], plain[i], 1e-5 * (1 + std::fabs(plain[i]))) << rows << " rows, entry " << i;
  }
}

// Losses of `steps` Adam steps on one fixed batch of a small Transformer, in precision p.
std::vector<float> train_losses(Precision p, int steps) {
  TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 40;
  c.d_model = 64;
  c.heads = 4;
  c.encoder_layers = c.decoder_layers = 2;
  c.d_ff = 128;
  c.dropout = 0.0f;
  c.norm_first = true;
  Transformer m = make_transformer(c, 7);
  const int64_t B = 4, T = 12;
  std::vector<int32_t> src(B * T), tgt(B * (T + 1));
  Rng rng(11);
  for (auto& t : src) t = 3 + static_cast<int32_t>(rng.below(37));
  for (auto& t : tgt) t = 3 + static_cast<int32_t>(rng.below(37));
  std::vector<int32_t> tin, tout;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      tin.push_back(t == 0 ? c.bos_id : tgt[b * (T + 1) + t]);
      tout.push_back(tgt[b * (T + 1) + t + 1]);
    }
  Tensor s = Tensor::from_ids(src, {B, T}), ti = Tensor::from_ids(tin, {B, T}), to = Tensor::from_ids(tout, {B, T});
  prepare(m, p, Use::training);
  Adam adam(m.parameters());
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) {
    Tape tape;
    Var loss;
    {
      TapeScope ts(tape);
      Context ctx;
      ctx.training = true;
      Var memory = encode(m, s, ctx);
      Var logits = decode(m, ti, memory, padding_mask(s, c.pad_id), ctx);
      loss = cross_entropy(logits, to, 0.1f, c.pad_id);
      tape.backward(loss);
    }
    losses.push_back(loss.value().data<float>()[0]);
    adam.update(1e-3f);
    adam.zero_grad();
  }
  return losses;
}

TEST(PrecisionTest, Bf16TrainingStepsTrackF32) {
  const int steps = 8;
  std::vector<float> f = train_losses(Precision::fp32, steps), h = train_losses(Precision::bf16, steps);
  double worst = 0;
  for (int i = 0; i < steps; ++i) {
    const double rel = std::fabs(h[i] - f[i]) / f[i];
    worst = std::max(worst, rel);
    std::printf("[bf16 training] step %d loss f32 %.5f bf16 %.5f rel diff %.2e\n", i + 1, f[i], h[i], rel);
    EXPECT_LT(rel, 0.01) << "step " << i + 1;
  }
  std::printf("[bf16 training] worst rel loss diff %.2e (tolerance 1e-2)\n", worst);
  EXPECT_LT(h.back(), 0.9 * h.front()) << "bf16 training does not learn";
  EXPECT_GT(worst, 0.0) << "bf16 gave f32's losses: was it applied?";
}

}  // namespace
}  // namespace attn
