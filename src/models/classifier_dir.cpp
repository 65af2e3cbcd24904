#include "attn/models/stored_precision.h"
#include "attn/models/classifier_dir.h"

#include <filesystem>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/model_dir.h"

namespace attn {

void save_classifier_weights(const Classifier& m, const std::string& dir) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [k, v] : m.named) tensors[k] = v.value();
  io::save_safetensors(dir + "/model.safetensors", tensors, {{"format", "attn-classifier"}});
}

void save_classifier(const ClassifierModel& m, const std::string& dir, const nlohmann::json& extra) {
  std::filesystem::create_directories(dir);
  nlohmann::json j = {{"task", "classification"},
                      {"model", classifier_config_to_json(m.model.config)},
                      {"labels", m.labels},
                      {"vocab", "vocab.txt"}};
  for (const auto& [k, v] : extra.items()) j[k] = v;
  data::save_vocab(m.vocab, dir + "/vocab.txt");
  save_classifier_weights(m.model, dir);
  io::write_file_atomic(dir + "/config.json", j.dump(2) + "\n");
}

ClassifierModel load_classifier(const std::string& dir) {
  std::string path = dir + "/config.json";
  nlohmann::json j = read_json_file(path);
  check(j.is_object(), path, ": must be a JSON object");
  const std::string task = j.contains("task") && j["task"].is_string() ? j["task"].get<std::string>() : "";
  check(task == "classification", path, ": not a classifier (task is '", task, "')");
  check(j.contains("model") && j["model"].is_object(), path,
        ": no \"model\" entry (the classifier's configuration, an object)");
  ClassifierModel m;
  try {
    m.labels = j.at("labels").get<std::vector<std::string>>();
    m.vocab = data::load_vocab(dir + "/" + j.at("vocab").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": ", e.what());
  }
  ClassifierConfig c = classifier_config_from_json(j["model"], path);
  check(c.classes == static_cast<int64_t>(m.labels.size()), path, ": ", c.classes, " classes but ",
        m.labels.size(), " labels");
  check(c.vocab == m.vocab.size(), path, ": vocab ", c.vocab, " but vocab.txt holds ", m.vocab.size(), " tokens");
  std::string weights = dir + "/model.safetensors";
  m.model = classifier_from_tensors(c, load_model_weights(weights), weights);
  return m;
}

Tensor encode_texts(const ClassifierModel& m, const std::vector<std::string>& texts) {
  int64_t L = m.model.config.pad_size;
  Tensor ids = Tensor::empty({static_cast<int64_t>(texts.size()), L}, DType::i32);
  for (size_t i = 0; i < texts.size(); ++i) {
    std::vector<int32_t> row = m.vocab.encode(texts[i], L, m.model.config.pooling == Pooling::cls);
    std::copy(row.begin(), row.end(), ids.data<int32_t>() + static_cast<int64_t>(i) * L);
  }
  return ids;
}

}  // namespace attn
