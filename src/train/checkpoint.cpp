#include "attn/train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/io/json.h"

namespace attn {

namespace fs = std::filesystem;

namespace {

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}

void copy_into(const std::string& file, const std::string& name, Tensor& dst, const Tensor& src) {
  if (!(src.shape() == dst.shape() && src.dtype() == dst.dtype()))
    fail(file, ": tensor '", name,
         "' has shape ", shape_str(src.shape()), ", the model has ", shape_str(dst.shape()));
  dst.copy_from(src);
}

}  // namespace

std::vector<std::string> list_checkpoints(const std::string& root) {
  std::vector<std::string> out;
  fs::path dir = fs::path(root) / "checkpoints";
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (e.is_directory() && n.rfind("step-", 0) == 0 && n.find(".tmp") == std::string::npos &&
        fs::exists(e.path() / "state.json"))
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string latest_checkpoint(const std::string& root) {
  auto all = list_checkpoints(root);
  return all.empty() ? "" : all.back();
}

std::string save_checkpoint(const std::string& root, int64_t step, const Adam& adam,
                            const nlohmann::json& state, int keep, const std::map<std::string, Tensor>& ema) {
  fs::path dir = fs::path(root) / "checkpoints";
  fs::create_directories(dir);
  // Leftovers of a save that was killed.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos) fs::remove_all(e.path());
  fs::path final_dir = dir / step_name(step), tmp = dir / (step_name(step) + ".tmp");
  fs::create_directories(tmp);
  std::map<std::string, Tensor> params, moments;
  for (size_t i = 0; i < adam.params.size(); ++i) {
    const auto& [name, p] = adam.params[i];
    params[name] = p.value();
    moments["m." + name] = adam.m[i];
    moments["v." + name] = adam.v[i];
  }
  io::save_safetensors((tmp / "model.safetensors").string(), params);
  io::save_safetensors((tmp / "optimizer.safetensors").string(), moments);
  if (!ema.empty()) io::save_safetensors((tmp / "ema.safetensors").string(), ema);
  nlohmann::json s = state;
  s["step"] = step;
  s["adam_step"] = adam.step;
  io::write_file_atomic((tmp / "state.json").string(), s.dump(2) + "\n");
  fsync_path(tmp.string());
  if (fs::exists(final_dir)) fs::remove_all(final_dir);
  fs::rename(tmp, final_dir);
  fsync_path(dir.string());
  if (keep > 0) {
    auto all = list_checkpoints(root);
    for (size_t i = 0; i + keep < all.size(); ++i) fs::remove_all(all[i]);
  }
  return final_dir.string();
}

nlohmann::json load_checkpoint(const std::string& path, Adam& adam) {
  std::string mp = path + "/model.safetensors", op = path + "/optimizer.safetensors";
  auto params = io::load_safetensors(mp);
  auto moments = io::load_safetensors(op);
  for (size_t i = 0; i < adam.params.size(); ++i) {
    const auto& [name, p] = adam.params[i];
    auto it = params.find(name);
    check(it != params.end(), mp, ": tensor '", name, "' is missing");
    Tensor value = p.value();
    copy_into(mp, name, value, it->second);
    for (auto [prefix, dst] : {std::pair<std::string, Tensor*>{"m.", &adam.m[i]}, {"v.", &adam.v[i]}}) {
      auto jt = moments.find(prefix + name);
      check(jt != moments.end(), op, ": tensor '", prefix + name, "' is missing");
      copy_into(op, prefix + name, *dst, jt->second);
    }
  }
  check(params.size() == adam.params.size(), mp, ": holds ", params.size(), " tensors, the model has ",
        adam.params.size());
  std::string sp = path + "/state.json";
  nlohmann::json state = io::parse_json(io::read_file(sp), sp);
  adam.step = state.value("adam_step", int64_t{0});
  return state;
}

std::map<std::string, Tensor> load_checkpoint_ema(const std::string& path) {
  const std::string file = path + "/ema.safetensors";
  if (!fs::exists(file)) return {};
  return io::load_safetensors(file);
}

std::string restore_newest_valid(const std::string& root, const std::function<void(const std::string&)>& restore) {
  const std::vector<std::string> all = list_checkpoints(root);
  std::string reasons;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      restore(*it);
      if (it != all.rbegin())
        std::fprintf(stderr, "resuming from %s, the newest checkpoint that can be read\n", it->c_str());
      return *it;
    } catch (const std::exception& e) {  // attn::Error, or a filesystem or allocation failure
      std::fprintf(stderr, "checkpoint %s cannot be restored (%s); trying the one before\n", it->c_str(), e.what());
      reasons += std::string(reasons.empty() ? "" : "; ") + e.what();
    }
  }
  if (!all.empty())
    fail("--resume: none of the ", all.size(), " checkpoints in ", root, "/checkpoints can be restored: ", reasons);
  return "";
}

std::string first_changed_key(const nlohmann::json& saved, const nlohmann::json& requested, const std::string& prefix) {
  if (!saved.is_object() || !requested.is_object()) return saved == requested ? "" : prefix;
  for (const nlohmann::json* side : {&saved, &requested})
    for (const auto& [key, value] : side->items()) {
      const std::string name = prefix.empty() ? key : prefix + "." + key;
      if (!saved.contains(key) || !requested.contains(key)) return name;
      std::string inner = first_changed_key(saved[key], requested[key], name);
      if (!inner.empty()) return inner;
    }
  return "";
}

void check_same_model(const nlohmann::json& saved, const nlohmann::json& requested, const std::string& source,
                      const std::string& key_prefix) {
  const std::string key = first_changed_key(saved, requested);
  if (key.empty()) return;
  auto at = [&](const nlohmann::json& j) {
    const nlohmann::json* v = &j;
    for (size_t start = 0; v && start <= key.size();) {
      const size_t dot = std::min(key.find('.', start), key.size());
      const std::string part = key.substr(start, dot - start);
      v = v->is_object() && v->contains(part) ? &(*v)[part] : nullptr;
      start = dot + 1;
    }
    return v ? v->dump() : std::string("(not set)");
  };
  fail("--resume: ", key_prefix, key, " is ", at(saved), " in ", source, " but ", at(requested),
       " now; a resumed run keeps its model. Undo the change, or train into another model_dir");
}

}  // namespace attn

namespace attn {

std::map<std::string, Tensor> average_checkpoints(const std::vector<std::string>& paths) {
  check(!paths.empty(), "average: no checkpoints");
  std::map<std::string, std::vector<double>> sums;
  std::map<std::string, Shape> shapes;
  for (const std::string& p : paths) {
    std::string file = p + "/model.safetensors";
    auto tensors = io::load_safetensors(file);
    if (shapes.empty()) {
      for (const auto& [k, t] : tensors) {
        shapes[k] = t.shape();
        sums[k].assign(static_cast<size_t>(t.numel()), 0.0);
      }
    }
    check(tensors.size() == shapes.size(), file, ": holds ", tensors.size(), " tensors, ", paths[0],
          " holds ", shapes.size());
    for (const auto& [k, t] : tensors) {
      check(shapes.count(k) && shapes[k] == t.shape() && t.dtype() == DType::f32, file, ": tensor '", k,
            "' does not match the first checkpoint");
      const float* x = t.data<float>();
      auto& s = sums[k];
      for (size_t i = 0; i < s.size(); ++i) s[i] += x[i];
    }
  }
  std::map<std::string, Tensor> out;
  for (const auto& [k, s] : sums) {
    Tensor t = Tensor::empty(shapes[k]);
    float* y = t.data<float>();
    for (size_t i = 0; i < s.size(); ++i) y[i] = static_cast<float>(s[i] / static_cast<double>(paths.size()));
    out[k] = t;
  }
  return out;
}

}  // namespace attn
