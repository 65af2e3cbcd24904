// The http target: the bytes one client sends on one connection, through attn serve's own request
// path in this process, without a socket: cpp-httplib's reading of each request (request line,
// headers, Content-Length or chunked body, query and form parameters, keep-alive: several requests
// a connection) as attn's Listener drives it (apps/serve/connection.cpp), attn's routes
// (http.cpp: the JSON body, LibreTranslate's form, GET /v1/attention's query), every field of
// every route (request.cpp, service.cpp, service_routes.cpp, libretranslate.cpp), and then the
// computing of what the request asked, on three tiny random models (a Transformer reading text,
// an RNN reading token ids, a classifier): a request's options reach the search and the output
// writers too. Tiny limits (4 sentences of 256 bytes, 16 positions) keep one input in milliseconds.
//
// A refusal (4xx, 503 when a queue is full) is the expected answer to a bad request. A 500 is a
// finding: some exception other than the request's HttpError or a library check escaped to the
// handler (the client gets an unexplained error), as is a crash or a sanitizer report.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "attn/data/char_vocab.h"
#include "attn/data/tokenizer.h"
#include "attn/io/atomic_file.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/seq2seq.h"
#include "http.h"
#include "targets.h"

namespace attn::fuzz {
namespace {

// One connection's bytes: reads hand them out until none are left; writes (the responses) are kept.
class BytesStream : public httplib::Stream {
 public:
  explicit BytesStream(std::string_view in) : in_(in) {}
  bool is_readable() const override { return pos_ < in_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, in_.size() - pos_);
    std::copy_n(in_.data() + pos_, n, ptr);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 40000; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 8080; }
  socket_t socket() const override { return -1; }
  std::string out;

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

std::unique_ptr<serve::ServedModel> served(const std::string& name) {
  auto m = std::make_unique<serve::ServedModel>();
  m->name = name;
  m->dir = "<fuzz: " + name + ">";
  return m;
}

// "en-de": a Transformer with the 120-piece SentencePiece model of the sentencepiece seeds, 16
// positions (longer texts are split, as attn translate's --on-long split); "ids": an RNN without a
// tokenizer; "cls": a character-level classifier of three labels.
std::vector<std::unique_ptr<serve::ServedModel>> tiny_models() {
  std::vector<std::unique_ptr<serve::ServedModel>> models;
  auto text = served("en-de");
  data::Tokenizer tokenizer = data::Tokenizer::from_serialized(
      io::read_file(std::string(ATTN_FUZZ_DIR) + "/corpus/sentencepiece/unigram120.model"), "unigram120.model");
  TransformerConfig t;
  t.src_vocab = t.tgt_vocab = tokenizer.vocab_size();
  t.d_model = 8, t.heads = 2, t.encoder_layers = t.decoder_layers = 1, t.d_ff = 16, t.max_len = 16;
  std::vector<Seq2Seq> transformer = {make_seq2seq(t, 1)};
  prepare(transformer.front(), Precision::fp32, Use::inference);
  auto shared = std::make_shared<const data::Tokenizer>(std::move(tokenizer));
  text->translator.emplace(std::move(transformer), Tokenizers{shared, shared}, std::vector<std::string>{"en-de"});
  models.push_back(std::move(text));
  auto ids = served("ids");
  RnnConfig r;
  r.src_vocab = r.tgt_vocab = 40;
  r.d_model = 8, r.max_len = 16;
  std::vector<Seq2Seq> rnn = {make_seq2seq(r, 2)};
  prepare(rnn.front(), Precision::fp32, Use::inference);
  ids->translator.emplace(std::move(rnn), Tokenizers{}, std::vector<std::string>{"ids"});
  models.push_back(std::move(ids));
  auto cls = served("cls");
  ClassifierConfig c;
  c.vocab = 30, c.classes = 3, c.pad_size = 16, c.d_model = 8, c.heads = 2, c.layers = 1, c.d_ff = 16;
  c.pooling = Pooling::mean;
  cls->classifier.emplace(ClassifierModel{make_classifier(c, 3), data::build_vocab({"the cat sat on a mat"}, {}), {"a", "b", "c"}});
  prepare(cls->classifier->model, Precision::fp32, Use::inference);
  models.push_back(std::move(cls));
  return models;
}

struct Server {
  std::unique_ptr<serve::Service> service;
  std::unique_ptr<serve::HttpServer> http;
};

Server& server() {
  static Server s = [] {
    serve::ServiceOptions o;
    o.batch.batching = false;  // each request computed alone, at once
    o.limits.max_body_bytes = 1 << 16;
    o.limits.max_sentences = 4;
    o.limits.max_line_bytes = 256;
    o.threads = 1;
    Server made;
    made.service = std::make_unique<serve::Service>(tiny_models(), o);
    made.http = std::make_unique<serve::HttpServer>(*made.service, serve::HttpOptions{});
    return made;
  }();
  return s;
}

}  // namespace

void http(std::string_view bytes) {
  Server& s = server();
  BytesStream stream(bytes);
  // 500s are counted by the metrics (a count by status, not the rendered text: rendering it for
  // every input became two thirds of the target's time as the run went on, under ASan)
  const size_t before = s.service->metrics().answers(500);
  s.http->serve(stream);
  if (s.service->metrics().answers(500) != before)
    throw std::logic_error("fuzz property broken: a 500 answer; the responses: " + stream.out.substr(0, 2000));
}

}  // namespace attn::fuzz
