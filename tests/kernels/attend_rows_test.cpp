// The single-query attention products (kernels/attend_rows.h) against double-precision sums, for
// head widths that are and are not multiples of the 16-lane chunks (the classifier's d_k is 60),
// wider than the register blocks (q over 256 columns, the sum over 128), key counts that are and
// are not multiples of 4, and rows with a stride (a KV cache's capacity) wider than d_k.
#include "attn/kernels/attend_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attn/tensor/random.h"

namespace attn {
namespace {

TEST(AttendRows, MatchDoubleSums) {
  Rng rng(11);
  for (int64_t dk : {1, 15, 16, 17, 60, 64, 100, 128, 129, 300}) {
    for (int64_t rows : {0, 1, 3, 4, 5, 33}) {
      const int64_t ld = dk + 7;
      std::vector<float> q(dk), kv(static_cast<size_t>(std::max<int64_t>(rows, 1) * ld)), p(rows);
      for (float& x : q) x = static_cast<float>(rng.uniform() * 2 - 1);
      for (float& x : kv) x = static_cast<float>(rng.uniform() * 2 - 1);
      for (float& x : p) x = static_cast<float>(rng.uniform());
      const float scale = 0.125f;
      std::vector<float> s(rows, -1.0f), out(dk, -1.0f);
      scores_one_query(q.data(), kv.data(), ld, rows, dk, scale, s.data());
      weighted_rows(p.data(), kv.data(), ld, rows, dk, out.data());
      for (int64_t j = 0; j < rows; ++j) {
        double ref = 0, mag = 0;
        for (int64_t c = 0; c < dk; ++c) {
          ref += static_cast<double>(q[c]) * kv[j * ld + c];
          mag += std::fabs(static_cast<double>(q[c]) * kv[j * ld + c]);
        }
        EXPECT_NEAR(s[j], scale * ref, scale * mag * 1e-6 + 1e-7) << "dk " << dk << " rows " << rows << " key " << j;
      }
      for (int64_t c = 0; c < dk; ++c) {
        double ref = 0, mag = 0;
        for (int64_t j = 0; j < rows; ++j) {
          ref += static_cast<double>(p[j]) * kv[j * ld + c];
          mag += std::fabs(static_cast<double>(p[j]) * kv[j * ld + c]);
        }
        EXPECT_NEAR(out[c], ref, mag * 1e-6 + 1e-7) << "dk " << dk << " rows " << rows << " column " << c;
      }
    }
  }
}

}  // namespace
}  // namespace attn
