// Tape::watch (autodiff/var.h), which data-parallel training uses to start summing a bucket of
// gradients across ranks while backward still runs: a parameter may be handed on only when no
// later record changes its gradient. For each model family, a snapshot of every gradient taken when
// on_final hands it on must equal the gradient after the whole backward, bit for bit; every
// parameter is handed on exactly once; and for the Transformer and the classifier a third or more
// are handed on in the first half of backward's records (else there would be little to overlap).
#include <gtest/gtest.h>

#include <cstring>

#include "attn/models/classifier.h"
#include "attn/models/seq2seq.h"
#include "attn/ops/loss.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

using Params = std::vector<std::pair<std::string, Var>>;

Tensor random_ids(int64_t rows, int64_t cols, int32_t lo, int32_t hi, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> ids(static_cast<size_t>(rows * cols));
  for (int32_t& id : ids) id = lo + static_cast<int32_t>(rng.below(static_cast<uint64_t>(hi - lo)));
  return Tensor::from_ids(ids, {rows, cols});
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  const Tensor x = a.contiguous(), y = b.contiguous();
  return x.numel() == y.numel() && std::memcmp(x.data<float>(), y.data<float>(), x.numel() * sizeof(float)) == 0;
}

// Runs `loss_of` on a watched tape, then checks the snapshots against the final gradients.
template <class F>
void expect_final_when_handed_on(const Params& params, double early_fraction, F loss_of) {
  std::vector<const Node*> leaves;
  for (const auto& [name, p] : params) leaves.push_back(p.node());
  std::vector<Tensor> snapshot(params.size());
  std::vector<int> calls(params.size(), 0);
  std::vector<size_t> handed_at(params.size(), 0);  // records run when it was handed on
  size_t records_run = 0;
  Tape tape;
  {
    TapeScope scope(tape);
    tape.watch(
        leaves,
        [&](size_t k) {
          calls[k] += 1;
          handed_at[k] = records_run + 1;  // poll() counts the record just run after on_final
          if (params[k].second.grad().defined()) snapshot[k] = params[k].second.grad().clone();
        },
        [&] { records_run += 1; });
    Var loss = loss_of();
    tape.backward(loss);
  }
  size_t early = 0;
  for (size_t k = 0; k < params.size(); ++k) {
    EXPECT_EQ(calls[k], 1) << params[k].first;
    EXPECT_TRUE(params[k].second.grad().defined()) << params[k].first << " has no gradient";
    EXPECT_TRUE(same_bits(snapshot[k], params[k].second.grad())) << params[k].first << " changed after it was handed on";
    if (2 * handed_at[k] <= records_run) early += 1;
  }
  std::printf("%zu of %zu parameters handed on in the first half of backward (%zu records)\n", early, params.size(),
              records_run);
  EXPECT_GE(static_cast<double>(early), early_fraction * static_cast<double>(params.size()));
}

TEST(GradientWatch, TransformerGradientsAreFinalWhenHandedOn) {
  TransformerConfig c{.src_vocab = 40, .tgt_vocab = 40, .d_model = 16, .heads = 2, .encoder_layers = 2,
                      .decoder_layers = 2, .d_ff = 32, .dropout = 0.0f};
  Seq2Seq m = make_seq2seq(c, 3);
  prepare(m, Precision::fp32, Use::training);
  const Tensor src = random_ids(3, 7, 3, 40, 1), tgt_in = random_ids(3, 6, 3, 40, 2), tgt_out = random_ids(3, 6, 3, 40, 3);
  expect_final_when_handed_on(m.parameters(), 1.0 / 3, [&] {
    return cross_entropy(seq2seq_logits(m, src, tgt_in, Context{true}), tgt_out, 0.1f, c.pad_id);
  });
}

TEST(GradientWatch, RnnGradientsAreFinalWhenHandedOn) {
  RnnConfig c{.src_vocab = 40, .tgt_vocab = 40, .d_model = 16, .dropout = 0.0f};
  Seq2Seq m = make_seq2seq(c, 4);
  prepare(m, Precision::fp32, Use::training);
  const Tensor src = random_ids(2, 5, 3, 40, 4), tgt_in = random_ids(2, 4, 3, 40, 5), tgt_out = random_ids(2, 4, 3, 40, 6);
  // The decoder's cell runs at every target position, so its weights are final only when backward
  // reaches the first position; the encoder's after that: little to overlap, but nothing early.
  expect_final_when_handed_on(m.parameters(), 0.0, [&] {
    return cross_entropy(seq2seq_logits(m, src, tgt_in, Context{true}), tgt_out, 0.0f, c.pad_id);
  });
}

TEST(GradientWatch, ClassifierGradientsAreFinalWhenHandedOn) {
  ClassifierConfig c{.vocab = 30, .classes = 3, .pad_size = 6, .d_model = 16, .heads = 2, .layers = 2, .d_ff = 32,
                     .dropout = 0.0f};
  Classifier m = make_classifier(c, 5);
  prepare(m, Precision::fp32, Use::training);
  const Tensor ids = random_ids(4, 6, 1, 30, 7), labels = random_ids(4, 1, 0, 3, 8).reshape({4});
  expect_final_when_handed_on(m.parameters(), 1.0 / 3, [&] { return cross_entropy(classifier_logits(m, ids, Context{true}), labels); });
}

}  // namespace
}  // namespace attn
