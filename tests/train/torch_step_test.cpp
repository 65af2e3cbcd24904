// One training step of the Transformer against PyTorch (dropout off): the label-smoothed loss and
// every parameter's gradient, then the losses of the first 5 Adam steps
// (fixtures: tests/models/make_training_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "attn/io/safetensors.h"
#include "attn/models/model_dir.h"
#include "attn/ops/loss.h"
#include "attn/train/adam.h"

namespace attn {
namespace {

Var step_loss(const Transformer& m, std::map<std::string, Tensor>& f) {
  Context ctx;
  ctx.training = true;  // dropout is 0 in these configs
  Var memory = encode(m, f["src"], ctx);
  Var logits = decode(m, f["tgt_in"], memory, padding_mask(f["src"], m.config.pad_id), ctx);
  return cross_entropy(logits, f["tgt_out"], 0.1f, m.config.pad_id);
}

void check_config(const std::string& name) {
  std::string dir = std::string(ATTN_TEST_DATA) + "/training/" + name;
  Transformer m = import_torch(dir);
  auto f = io::load_safetensors(dir + "/step.safetensors");
  Tape tape;
  Var loss;
  {
    TapeScope scope(tape);
    loss = step_loss(m, f);
    tape.backward(loss);
  }
  float want = f["loss"].data<float>()[0];
  std::printf("[step] %s loss %.7f torch %.7f |diff| %.2e (tolerance 1e-5)\n", name.c_str(),
              loss.value().data<float>()[0], want, std::fabs(loss.value().data<float>()[0] - want));
  EXPECT_NEAR(loss.value().data<float>()[0], want, 1e-5);
  double worst = 0;
  int checked = 0;
  for (const auto& [key, p] : m.parameters()) {
    auto it = f.find("grad." + key);
    ASSERT_NE(it, f.end()) << "no PyTorch gradient for " << key;
    ASSERT_TRUE(p.grad().defined()) << "no gradient for " << key;
    std::vector<float> a = p.grad().to_vector(), b = it->second.to_vector();
    ASSERT_EQ(a.size(), b.size()) << key;
    double d = 0, scale = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
    }
    // Absolute tolerance relative to the tensor's largest gradient.
    double ratio = d / (1e-6 + 1e-4 * scale);
    worst = std::max(worst, ratio);
    EXPECT_LE(ratio, 1.0) << key << ": max|diff| " << d << " (largest |grad| " << scale << ")";
    ++checked;
  }
  std::printf("[step] %s %d gradients, worst max|diff| / (1e-6 + 1e-4 max|g|) = %.3f\n", name.c_str(),
              checked, worst);
  // The first 5 Adam steps (lr 1e-3, betas 0.9/0.98, eps 1e-9).
  Transformer fresh = import_torch(dir);
  Adam adam(fresh.parameters());
  const float* want_losses = f["adam_losses"].data<float>();
  for (int s = 0; s < 5; ++s) {
    Tape t;
    Var l;
    {
      TapeScope scope(t);
      l = step_loss(fresh, f);
      t.backward(l);
    }
    float got = l.value().data<float>()[0];
    std::printf("[adam] %s step %d loss %.6f torch %.6f\n", name.c_str(), s + 1, got, want_losses[s]);
    EXPECT_NEAR(got, want_losses[s], 1e-4) << "Adam step " << s + 1;
    adam.update(1e-3f);
    adam.zero_grad();
  }
}

TEST(TorchTrainingStep, PostLNTiedEmbeddings) { check_config("post_tied"); }
TEST(TorchTrainingStep, PreLNUntied) { check_config("pre_untied"); }

}  // namespace
}  // namespace attn
