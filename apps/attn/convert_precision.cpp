// attn convert --precision int8|bf16 MODEL_DIR OUT_DIR: a model directory whose linear layers'
// weights are stored in the precision they compute in (include/attn/models/stored_precision.h),
// smaller on disk and loaded straight into that precision. Before it is kept, the new directory is
// loaded and checked to compute the same bits as MODEL_DIR quantized at load.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "args.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/io.h"
#include "attn/io/safetensors.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/models/stored_precision.h"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

bool is_classifier(const nlohmann::json& config) { return config.value("task", std::string()) == "classification"; }

// Token ids every vocabulary has (3 .. vocab-1), a fixed pattern: [rows, cols].
Tensor probe_ids(int64_t rows, int64_t cols, int64_t vocab, int32_t first = -1) {
  std::vector<int32_t> ids(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) ids[i * cols + j] = static_cast<int32_t>(3 + (i * 7919 + j * 104729) % (vocab - 3));
  if (first >= 0)
    for (int64_t i = 0; i < rows; ++i) ids[i * cols] = first;
  return Tensor::from_ids(ids, {rows, cols});
}

// The model's outputs on a fixed probe, prepared in precision p: logits of the teacher-forced
// decoder, or of the classifier.
Tensor probe_outputs(const std::string& dir, bool classifier, Precision p) {
  NoGrad no_grad;
  if (classifier) {
    ClassifierModel m = load_classifier(dir);
    prepare(m.model, p, Use::inference);
    return classifier_logits(m.model, probe_ids(3, m.model.config.pad_size, m.model.config.vocab), Context{}).value();
  }
  Seq2Seq m = load_seq2seq(dir);
  prepare(m, p, Use::inference);
  const Seq2SeqCommon c = m.common();
  return seq2seq_logits(m, probe_ids(3, 9, c.src_vocab), probe_ids(3, 6, c.tgt_vocab, c.bos_id), Context{}).value();
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (!(a.shape() == b.shape())) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data<float>(), y.data<float>(), x.nbytes()) == 0;
}

// OUT_DIR written in a temporary directory beside it, then renamed into place.
void write_converted(const std::string& in, const nlohmann::json& config, const std::string& tmp, Precision p,
                     int qmax) {
  fs::create_directories(tmp);
  nlohmann::json out = config;
  out["precision"] = precision_name(p);
  if (p == Precision::int8) out["int8_weight_max"] = qmax;
  std::vector<std::string> files = tokenizer_files(config);  // the files config.json names
  if (config.contains("vocab") && config["vocab"].is_string()) files.push_back(config["vocab"].get<std::string>());
  for (const std::string& name : files) io::write_file_atomic(tmp + "/" + name, io::read_file(in + "/" + name));
  const auto tensors = io::load_safetensors_copied(in + "/model.safetensors");
  io::save_safetensors(tmp + "/model.safetensors", to_stored_precision(tensors, p, qmax),
                       {{"format", "pt"}, {"producer", "attn"}, {"precision", precision_name(p)}});
  io::write_file_atomic(tmp + "/config.json", out.dump(2) + "\n");
}

}  // namespace

int run_convert(int argc, char** argv) {
  CLI::App args{"Writes OUT_DIR, a copy of MODEL_DIR whose linear layers' weights are stored in\n"
                "int8 (per-row scales) or bf16: smaller, and loaded straight into that precision\n"
                "(translate, score and classify use the precision config.json records unless\n"
                "--precision says otherwise). The copy is checked to compute the same bits as\n"
                "MODEL_DIR quantized at load before it is kept.",
                "attn convert"};
  describe(args, "attn convert --precision int8 runs/ende runs/ende-int8");
  std::string in, out, precision;
  int qmax = int8_weight_max();
  args.add_option("MODEL_DIR", in, "model directory in fp32 (translation or classifier)")->required();
  args.add_option("OUT_DIR", out, "directory to write (must not exist)")->required();
  args.add_option("--precision", precision, "int8 or bf16")->required()->check(CLI::IsMember({"int8", "bf16"}));
  add_int(args, "--int8-max", qmax, 63, 127,
          "largest |W_q| of int8 weights: 127 for CPUs with VNNI, 63 without (default: this CPU's)");
  if (!parse(args, argc, argv)) return 0;
  const Precision p = parse_precision(precision, "--precision");
  const nlohmann::json config = read_json_file(in + "/config.json");
  check(stored_precision(config, in + "/config.json") == Precision::fp32, in,
        " is stored in ", config.value("precision", std::string()), " already: convert its fp32 model");
  check(!fs::exists(out), out, ": exists already; attn convert writes a new directory");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string tmp = out + ".tmp-" + std::to_string(::getpid());
  const bool checked = p == Precision::bf16 || qmax == int8_weight_max();
  try {
    write_converted(in, config, tmp, p, qmax);
    const bool classifier = is_classifier(config);
    if (checked) {
      check(same_bits(probe_outputs(in, classifier, p), probe_outputs(tmp, classifier, p)),
            "convert: the converted model does not compute the same bits as ", in, " in ", precision,
            " (a weight that is not a linear layer's was converted?); nothing written");
    } else {
      std::fprintf(stderr, "--int8-max %d is not this CPU's range (%d): the copy is not checked against %s here\n",
                   qmax, int8_weight_max(), in.c_str());
    }
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
  fs::rename(tmp, out);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "wrote %s: model.safetensors %.1f MB (%s: %.1f MB)%s; %.1f s\n", out.c_str(),
               static_cast<double>(fs::file_size(out + "/model.safetensors")) / 1e6, in.c_str(),
               static_cast<double>(fs::file_size(in + "/model.safetensors")) / 1e6,
               checked ? ", the same outputs as the fp32 model quantized at load" : "", seconds);
  return 0;
}

}  // namespace attn::cli
