// A parallel corpus: two aligned text files (source and target, one sentence a line, UTF-8),
// tokenised into examples {src ids, tgt ids, line}. For training, empty pairs and pairs longer
// than max_len tokens on either side are skipped and counted; for evaluation nothing is skipped,
// so example k is line k.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/data/tokenizer.h"

namespace attn::data {

struct Example {
  std::vector<int32_t> src, tgt;  // token ids without bos/eos
  int64_t line = 0;               // 0-based line in the files
};

struct CorpusOptions {
  int64_t max_len = 256;   // tokens per side (before eos); longer pairs skipped; 0 = no limit
  bool skip_empty = true;  // skip pairs with no tokens on either side

  static CorpusOptions training(int64_t max_len = 256) { return {max_len, true}; }
  static CorpusOptions evaluation() { return {0, false}; }
};

struct CorpusStats {
  int64_t lines = 0, kept = 0, skipped_empty = 0, skipped_long = 0;
  int64_t src_tokens = 0, tgt_tokens = 0;  // of the kept examples, without eos
};

struct ParallelCorpus {
  std::string src_path, tgt_path;
  std::vector<Example> examples;
  CorpusStats stats;
};

// Reads and tokenises both files (lines in parallel with OpenMP). Errors: unequal line counts
// (naming both files and counts), invalid UTF-8 (file:line).
ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Tokenizer& src_tokenizer, const Tokenizer& tgt_tokenizer,
                                    const CorpusOptions& options = {});
// The same with one shared vocabulary.
ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Tokenizer& tokenizer, const CorpusOptions& options = {});

// Tokenises lines already read (for text that is not in files); names are for errors.
ParallelCorpus tokenize_parallel(const std::vector<std::string>& src_lines,
                                 const std::vector<std::string>& tgt_lines,
                                 const Tokenizer& src_tokenizer, const Tokenizer& tgt_tokenizer,
                                 const CorpusOptions& options, const std::string& src_name,
                                 const std::string& tgt_name);

// Ids of each line, no bos/eos (e.g. the source side of text to translate).
std::vector<std::vector<int32_t>> encode_lines(const std::vector<std::string>& lines,
                                               const Tokenizer& tokenizer);

// "120202 lines, 120150 kept, 2 empty and 50 longer than 256 tokens skipped; ..."
std::string describe(const CorpusStats& stats, int64_t max_len);

}  // namespace attn::data
