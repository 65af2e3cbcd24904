// The RNN encoder-decoder <-> tests/rnn/torch_rnn.py's directory (config.json + weights.npz).
#include "attn/models/rnn_seq2seq_torch.h"

#include <filesystem>
#include <map>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/model_dir.h"

namespace attn {

namespace fs = std::filesystem;

nlohmann::json rnn_torch_config(const RnnConfig& c) {
  return {{"model", "rnn"},
          {"src_vocab", c.src_vocab},
          {"tgt_vocab", c.tgt_vocab},
          {"d_model", c.d_model},
          {"encoder_layers", c.encoder_layers},
          {"decoder_layers", c.decoder_layers},
          {"dropout", c.dropout},
          {"share_embeddings", c.share_embeddings},
          {"tie_output", c.tie_output},
          {"rnn_cell", name(c.cell)},
          {"bidirectional", c.bidirectional},
          {"encoder_hidden", c.encoder_hidden},
          {"score", score_name(c.score)},
          {"input_feeding", c.input_feeding},
          {"pad_id", c.pad_id},
          {"bos_id", c.bos_id},
          {"eos_id", c.eos_id}};
}

void export_torch_rnn(const RnnSeq2Seq& m, const std::string& ref_dir) {
  fs::create_directories(ref_dir);
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, v] : m.named) tensors[name] = v.value();  // tied keys too: a state_dict
  io::save_npz(ref_dir + "/weights.npz", tensors);
  io::write_file_atomic(ref_dir + "/config.json", rnn_torch_config(m.config).dump(2) + "\n");
}

RnnSeq2Seq import_torch_rnn(const std::string& ref_dir) {
  std::string config_path = ref_dir + "/config.json", weights_path = ref_dir + "/weights.npz";
  RnnConfig c = rnn_config_from_json(read_json_file(config_path), config_path);
  check(fs::exists(weights_path), weights_path, ": no such file");
  return rnn_seq2seq_from_tensors(c, io::load_npz(weights_path), weights_path);
}

}  // namespace attn
