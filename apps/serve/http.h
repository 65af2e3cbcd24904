// attn serve's HTTP routes over a Service (service.h):
//   GET  /                 the page (page.h)
//   GET  /health           {"status": "ok"} (503 {"status": "loading"} until every batcher has warmed
//                          its model, {"status": "draining"} after SIGTERM)
//   GET  /v1/models        the models and what they take
//   POST /v1/translate, /v1/score, /v1/classify, /v1/attention   JSON in, JSON out (docs/serve.md)
//   GET  /v1/attention?model=..&text=..   the attention page (format=html, the default here) for an iframe
//   POST /translate, GET /languages       LibreTranslate's API
//   GET  /metrics          Prometheus text
// Every error is {"error": "..."} with its status; 503 carries Retry-After.
#pragma once

#include <atomic>
#include <string>

#include "connection.h"
#include "service.h"

namespace attn::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;           // 0: any free port (tests)
  int threads = 64;          // worker threads: whole requests handled at once (connection.h)
  ConnectionLimits connection;
};

class HttpServer {
 public:
  HttpServer(Service& service, const HttpOptions& options);
  // Binds host:port and returns the port (an error naming them when it cannot).
  int bind();
  // Serves until drain(); returns once every connection is done.
  void listen();
  void drain();
  // Serves one connection's requests from `stream` in this thread, without binding (fuzz/http.cpp).
  bool serve(httplib::Stream& stream) { return listener_.serve(stream); }
  size_t open_connections() const { return listener_.open_connections(); }

 private:
  void add_routes();
  Service& service_;
  HttpOptions options_;
  Listener listener_;
  std::atomic<bool> draining_{false};
};

}  // namespace attn::serve
