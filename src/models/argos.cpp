#include "attn/models/argos.h"

#include <filesystem>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/zip.h"
#include "hf_json.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// The package's members under its one top directory ("translate-en_de-1_0/"), by their path below it.
std::map<std::string, std::string> members(const std::string& path) {
  const std::string archive = io::read_file(path);
  std::map<std::string, std::string> all;
  io::for_each_zip_member(archive, path, [&](const std::string& name, std::string_view bytes) {
    if (!name.empty() && name.back() != '/') all[name] = std::string(bytes);
  });
  // the directory holding metadata.json (argospm's packages have one top directory; accept none)
  std::string prefix;
  bool found = false;
  for (const auto& [name, bytes] : all) {
    const std::string leaf = "metadata.json";
    if (name == leaf || (name.size() > leaf.size() && name.compare(name.size() - leaf.size() - 1, std::string::npos, "/" + leaf) == 0)) {
      const std::string p = name.substr(0, name.size() - leaf.size());
      if (!found || p.size() < prefix.size()) prefix = p, found = true;
    }
  }
  check(found, path, ": no metadata.json in the package (an Argos package is a zip of metadata.json, model/ and ",
        "sentencepiece.model)");
  std::map<std::string, std::string> out;
  for (auto& [name, bytes] : all)
    if (name.rfind(prefix, 0) == 0) out[name.substr(prefix.size())] = std::move(bytes);
  return out;
}

std::string text_of(const nlohmann::json& j, const char* key, const std::string& where) {
  const std::string v = detail::hf_value<std::string>(j, key, "", where, "an Argos metadata.json");
  check(!v.empty(), where, ": \"", key, "\" is missing or empty");
  return v;
}

}  // namespace

bool is_argos_package(const std::string& path) {
  const std::string ext = ".argosmodel";
  return fs::is_regular_file(path) && path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

ArgosModel import_argos(const std::string& path, const std::string& work) {
  std::map<std::string, std::string> files = members(path);
  const std::string meta_where = path + ": metadata.json";
  ArgosModel out;
  try {
    out.metadata = nlohmann::json::parse(files.at("metadata.json"));
  } catch (const nlohmann::json::exception& e) {
    fail(meta_where, ": not valid JSON (", e.what(), ")");
  }
  check(out.metadata.is_object(), meta_where, ": not a JSON object");
  const std::string type = detail::hf_value<std::string>(out.metadata, "type", "translate", meta_where, "an Argos metadata.json");
  check(type == "translate", meta_where, ": \"type\" is \"", type, "\"; attn imports translation packages");
  out.languages = {{"source", {{"code", text_of(out.metadata, "from_code", meta_where)},
                               {"name", detail::hf_value<std::string>(out.metadata, "from_name", "", meta_where, "an Argos metadata.json")}}},
                   {"target", {{"code", text_of(out.metadata, "to_code", meta_where)},
                               {"name", detail::hf_value<std::string>(out.metadata, "to_name", "", meta_where, "an Argos metadata.json")}}}};
  check(files.count("sentencepiece.model"), path, ": no sentencepiece.model beside metadata.json (attn reads ",
        "SentencePiece packages; BPE ones are not supported)");
  check(files.count("model/model.bin"), path, ": no model/model.bin (the package's CTranslate2 model)");
  fs::create_directories(work + "/model");
  for (const auto& [name, bytes] : files) {
    if (name.rfind("model/", 0) != 0 && name != "sentencepiece.model") continue;
    check(name.find("..") == std::string::npos && name.find('/', 6) == std::string::npos, path, ": member \"", name,
          "\" is not a file of model/");
    io::write_file_atomic(work + "/" + name, bytes);
  }
  out.model = import_ct2(work + "/model", work + "/sentencepiece.model");
  // apply_packaged_translation's use of the model (models/argos.h)
  out.model.tokenizer["source_eos"] = false;
  out.model.translate_defaults["beam_size"] = 4;
  out.model.translate_defaults["length_penalty"] = 0.2;
  return out;
}

}  // namespace attn
