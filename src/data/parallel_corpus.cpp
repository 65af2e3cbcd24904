// Reading a parallel corpus: aligned lines, tokenised, filtered for training.
#include "attn/data/parallel_corpus.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "attn/data/text_file.h"
#include "attn/error.h"

namespace attn::data {

std::vector<std::vector<int32_t>> encode_lines(const std::vector<std::string>& lines,
                                               const Tokenizer& tokenizer) {
  std::vector<std::vector<int32_t>> ids(lines.size());
  const int64_t n = static_cast<int64_t>(lines.size());
  // SentencePiece's Encode is const and thread-safe; an exception must not leave the region.
  std::string error;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t i = 0; i < n; ++i) {
    try {
      ids[i] = tokenizer.encode(lines[i]);
    } catch (const std::exception& e) {
#pragma omp critical
      if (error.empty()) error = e.what();
    }
  }
  check(error.empty(), error);
  return ids;
}

ParallelCorpus tokenize_parallel(const std::vector<std::string>& src_lines,
                                 const std::vector<std::string>& tgt_lines,
                                 const Tokenizer& src_tokenizer, const Tokenizer& tgt_tokenizer,
                                 const CorpusOptions& options, const std::string& src_name,
                                 const std::string& tgt_name) {
  check(src_lines.size() == tgt_lines.size(), "parallel corpus: ", src_name, " has ",
        src_lines.size(), " lines but ", tgt_name, " has ", tgt_lines.size(),
        " lines; the files must be aligned line by line");
  check(options.max_len >= 0, "parallel corpus: max_len ", options.max_len, " is negative");
  ParallelCorpus corpus;
  corpus.src_path = src_name;
  corpus.tgt_path = tgt_name;
  auto src = encode_lines(src_lines, src_tokenizer);
  auto tgt = encode_lines(tgt_lines, tgt_tokenizer);
  CorpusStats& st = corpus.stats;
  st.lines = static_cast<int64_t>(src.size());
  corpus.examples.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (options.skip_empty && (src[i].empty() || tgt[i].empty())) {
      ++st.skipped_empty;
      continue;
    }
    const int64_t longest = static_cast<int64_t>(std::max(src[i].size(), tgt[i].size()));
    if (options.max_len > 0 && longest > options.max_len) {
      ++st.skipped_long;
      continue;
    }
    st.src_tokens += static_cast<int64_t>(src[i].size());
    st.tgt_tokens += static_cast<int64_t>(tgt[i].size());
    corpus.examples.push_back({std::move(src[i]), std::move(tgt[i]), static_cast<int64_t>(i)});
  }
  st.kept = static_cast<int64_t>(corpus.examples.size());
  return corpus;
}

ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Tokenizer& src_tokenizer, const Tokenizer& tgt_tokenizer,
                                    const CorpusOptions& options) {
  auto src_lines = read_lines(src_path);
  auto tgt_lines = read_lines(tgt_path);
  return tokenize_parallel(src_lines, tgt_lines, src_tokenizer, tgt_tokenizer, options, src_path,
                           tgt_path);
}

ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Tokenizer& tokenizer, const CorpusOptions& options) {
  return read_parallel_corpus(src_path, tgt_path, tokenizer, tokenizer, options);
}

std::string describe(const CorpusStats& st, int64_t max_len) {
  std::ostringstream s;
  s << st.lines << " lines, " << st.kept << " kept";
  if (st.skipped_empty || st.skipped_long) {
    s << " (skipped: " << st.skipped_empty << " empty, " << st.skipped_long << " longer than "
      << max_len << " tokens)";
  }
  if (st.kept > 0) {
    s << "; tokens per sentence: source " << static_cast<double>(st.src_tokens) / st.kept
      << ", target " << static_cast<double>(st.tgt_tokens) / st.kept;
  }
  return s.str();
}

}  // namespace attn::data
