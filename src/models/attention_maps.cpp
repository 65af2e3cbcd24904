#include "attn/models/attention_maps.h"

#include <variant>

#include "attn/error.h"
#include "attn/models/teacher_forced_attention.h"

namespace attn {

std::vector<std::vector<float>> head_matrix(const Tensor& map, int64_t b, int64_t h) {
  check(map.dim() == 4 && b >= 0 && b < map.size(0) && h >= 0 && h < map.size(1), "head_matrix: row ", b,
        ", head ", h, " of a map ", shape_str(map.shape()));
  const Tensor m = map.select(0, b).select(0, h).contiguous();
  const int64_t Q = m.size(0), K = m.size(1);
  std::vector<std::vector<float>> rows(static_cast<size_t>(Q));
  for (int64_t i = 0; i < Q; ++i) rows[static_cast<size_t>(i)].assign(m.data<float>() + i * K, m.data<float>() + (i + 1) * K);
  return rows;
}

std::vector<std::vector<float>> mean_over_heads(const Tensor& map, int64_t b) {
  std::vector<std::vector<float>> sum = head_matrix(map, b, 0);
  for (int64_t h = 1; h < map.size(1); ++h) {
    const std::vector<std::vector<float>> m = head_matrix(map, b, h);
    for (size_t i = 0; i < sum.size(); ++i)
      for (size_t j = 0; j < sum[i].size(); ++j) sum[i][j] += m[i][j];
  }
  const float inv = 1.0f / static_cast<float>(map.size(1));
  for (auto& row : sum)
    for (float& x : row) x *= inv;
  return sum;
}

namespace {

Tensor one_row(const std::vector<int32_t>& ids, const char* what) {
  check(!ids.empty(), "teacher_forced_attention: empty ", what);
  return Tensor::from_ids(ids, {1, static_cast<int64_t>(ids.size())});
}

}  // namespace

AttentionMaps teacher_forced_attention(const Transformer& m, const std::vector<int32_t>& src,
                                       const std::vector<int32_t>& tgt_in) {
  NoGrad no_grad;
  Context ctx;  // inference: no dropout
  AttentionMaps maps;
  const Tensor s = one_row(src, "source"), t = one_row(tgt_in, "target");
  Var memory = encode(m, s, ctx, &maps);
  decode(m, t, memory, padding_mask(s, m.config.pad_id), ctx, &maps);
  return maps;
}

AttentionMaps teacher_forced_attention(const RnnSeq2Seq& m, const std::vector<int32_t>& src,
                                       const std::vector<int32_t>& tgt_in) {
  NoGrad no_grad;
  Context ctx;
  const Tensor s = one_row(src, "source");
  one_row(tgt_in, "target");
  RnnMemory memory = rnn_encode(m, s, ctx);
  RnnState state = memory.decoder_state;
  const int64_t S = s.size(1), T = static_cast<int64_t>(tgt_in.size());
  Tensor alpha = Tensor::empty({1, 1, T, S});
  for (int64_t t = 0; t < T; ++t) {
    // step t reads y_{t-1} = tgt_in[t] and attends with alpha_t [1, 1, S]
    Tensor weights;
    rnn_decode_step(m, memory, state, Tensor::from_ids({tgt_in[static_cast<size_t>(t)]}, {1}), ctx, &weights);
    alpha.slice(2, t, t + 1).copy_from(weights.reshape({1, 1, 1, S}));
  }
  AttentionMaps maps;
  maps.cross.push_back(alpha);
  return maps;
}

AttentionMaps teacher_forced_attention(const Seq2Seq& m, const std::vector<int32_t>& src,
                                       const std::vector<int32_t>& tgt_in) {
  return std::visit([&](const auto& net) { return teacher_forced_attention(net, src, tgt_in); }, m.net);
}

}  // namespace attn
