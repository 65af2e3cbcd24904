#include "command.h"

namespace attn::cli {

// Each command's entry point, defined in <name>.cpp.
int run_demo(int argc, char** argv);
int run_train(int argc, char** argv);
int run_average(int argc, char** argv);
int run_import(int argc, char** argv);
int run_import_torch(int argc, char** argv);
int run_export_torch(int argc, char** argv);
int run_export(int argc, char** argv);
int run_bleu(int, char**);
int run_translate(int argc, char** argv);
int run_score(int argc, char** argv);
int run_classify(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_info(int argc, char** argv);
int run_attend(int argc, char** argv);
int run_plot(int argc, char** argv);
int run_convert(int argc, char** argv);
int run_shortlist(int argc, char** argv);
int run_serve(int argc, char** argv);

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"demo", "a short tour of the core: tensors, autodiff, attention", run_demo},
      {"train", "train a model from a config file (translation or classification)", run_train},
      {"average", "average the last checkpoints into a model (the paper's last 5)", run_average},
      {"import", "a model another toolkit made (Hugging Face Marian, CTranslate2, Argos) as an attn model", run_import},
      {"import-torch", "convert a torch_ref.py directory (config.json + weights.npz) to an attn model", run_import_torch},
      {"convert", "store a model's linear layers in int8 or bf16: a smaller directory that loads in that precision", run_convert},
      {"export", "write an attn model as another toolkit's (--to ct2: a CTranslate2 directory)", run_export},
      {"export-torch", "write an attn model as a torch_ref.py directory", run_export_torch},
      {"translate", "translate text or ids: greedy, beam or sampling; ensembles, target prefixes (docs/decoding.md)", run_translate},
      {"attend", "the attention weights of a model on a sentence: an HTML page, SVG heatmaps or JSON", run_attend},
      {"shortlist", "a vocabulary shortlist from a parallel corpus, for translate --shortlist", run_shortlist},
      {"score", "log-probability of each target given its source (teacher forcing)", run_score},
      {"classify", "label text lines with a classifier: label<TAB>probability (--top-k)", run_classify},
      {"eval", "accuracy, macro-F1, per-class P/R/F1 and confusion matrix of a classifier on label<TAB>text", run_eval},
      {"serve", "serve models over HTTP: JSON API with batching across requests, LibreTranslate's API, a page to try them", run_serve},
      {"bleu", "BLEU and chrF of a translation against references, as sacreBLEU", run_bleu},
      {"plot", "training curves of one or more runs (train_log.jsonl) as a self-contained SVG or HTML page", run_plot},
      {"info", "the CPU, kernels, libraries and threads attn runs on (--kernels: the dispatch table)", run_info},
  };
  return table;
}

}  // namespace attn::cli
