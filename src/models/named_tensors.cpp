#include "attn/models/named_tensors.h"

#include <cmath>
#include <cstring>

#include "attn/error.h"

namespace attn {

std::vector<std::pair<std::string, std::string>> tied_aliases(bool share_embeddings, bool tie_output) {
  std::vector<std::pair<std::string, std::string>> a;
  if (share_embeddings) a.emplace_back("tgt_embed.weight", "src_embed.weight");
  if (tie_output) a.emplace_back("generator.weight", share_embeddings ? "src_embed.weight" : "tgt_embed.weight");
  return a;
}

Tensor adopt_or_copy(Tensor&& t) {
  const std::shared_ptr<Storage>& s = t.storage();
  const bool sole = s && s.use_count() == 1 && s->owned() && t.offset() == 0 && t.is_contiguous() &&
                    s->bytes == static_cast<size_t>(t.nbytes());
  return sole ? std::move(t) : t.clone();
}

void check_finite(const Tensor& t, const std::string& key, const std::string& source) {
  const int64_t i = first_non_finite(t);
  if (i >= 0)
    fail(source, ": tensor '", key, "' holds ", t.contiguous().data<float>()[i], " at flat index ", i,
         " (a diverged or corrupt model: every weight must be finite)");
}

void load_named_tensors(const std::vector<TensorSpec>& specs,
                        const std::vector<std::pair<std::string, std::string>>& aliases,
                        std::map<std::string, Tensor>&& tensors, const std::string& source,
                        std::map<std::string, Var>& named) {
  std::map<std::string, bool> used;
  for (const TensorSpec& s : specs) {
    auto it = tensors.find(s.key);
    check(it != tensors.end(), source, ": tensor '", s.key, "' is missing");
    Tensor& t = it->second;
    check(t.dtype() == DType::f32, source, ": tensor '", s.key, "' has dtype ", dtype_name(t.dtype()),
          ", expected F32");
    if (!(t.shape() == s.shape))
      fail(source, ": tensor '", s.key, "' has shape ", shape_str(t.shape()),
           ", the config needs ", shape_str(s.shape));
    check_finite(t, s.key, source);
    named[s.key] = Var(adopt_or_copy(std::move(t)), true);  // owned: training updates it in place
    used[s.key] = true;
  }
  for (const auto& [alias, target] : aliases) {
    named[alias] = named.at(target);
    auto it = tensors.find(alias);
    if (it == tensors.end()) continue;
    const Tensor& t = it->second;
    Tensor want = named.at(target).value();
    check(t.shape() == want.shape() && t.dtype() == DType::f32 &&
              std::memcmp(t.contiguous().raw_data(), want.raw_data(), want.nbytes()) == 0,
          source, ": tensor '", alias, "' should be tied to '", target, "' but differs from it");
    used[alias] = true;
  }
  for (const auto& [key, t] : tensors)
    check(used.count(key) > 0, source, ": unexpected tensor '", key, "' for this configuration");
}

}  // namespace attn
