#include "http.h"

#include <sys/socket.h>

#include <functional>
#include <sstream>

#include "attn/error.h"
#include "form.h"
#include "page.h"

namespace attn::serve {
namespace {

std::string dumped(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The answer as the response: its text moved into the body (no copy), the JSON tree freed before
// it is sent, and its share of the memory budget kept until the response is out.
void write(httplib::Response& res, Outcome o) {
  res.status = o.status;
  if (o.status == 503) res.set_header("Retry-After", "1");
  if (o.html.empty()) {
    res.body = dumped(o.json);
    o.json = nullptr;
    res.set_header("Content-Type", "application/json");
  } else {
    res.body = std::move(o.html);
    res.set_header("Content-Type", "text/html; charset=utf-8");
  }
  Listener::hold_until_sent(std::move(o.hold));
}

// Runs a route's handler, turning every failure into a JSON error: the request's own (HttpError),
// else as a job's computing failure is answered (job.h: a library check 400, out of memory 503,
// anything else 500).
Outcome answer(const std::function<Outcome()>& handler) {
  try {
    return handler();
  } catch (const HttpError& e) {
    return {e.status, {{"error", e.what()}}, ""};
  } catch (...) {
    return failure(std::current_exception());
  }
}

// A LibreTranslate body: JSON, or a form's fields (the URL's query, then the body: urlencoded or
// multipart). Every `q` is kept, in order, repeats included: one gives a string, several a list.
// Another repeated name takes its first value, as Flask's request.values.get (LibreTranslate's).
nlohmann::json libretranslate_body(const httplib::Request& req) {
  const std::string type = req.get_header_value("Content-Type");
  if (type.find("application/json") != std::string::npos) return parse_body(req.body);
  FormFields fields;
  if (const size_t q = req.target.find('?'); q != std::string::npos) fields = form_fields(req.target.substr(q + 1));
  if (type.find("application/x-www-form-urlencoded") != std::string::npos) {
    FormFields more = form_fields(req.body);
    fields.insert(fields.end(), more.begin(), more.end());
  }
  for (const auto& [name, part] : req.files)  // multipart/form-data: its fields (files have a filename)
    if (part.filename.empty()) fields.emplace_back(name, part.content);
  nlohmann::json body = nlohmann::json::object(), q = nlohmann::json::array();
  for (const auto& [key, value] : fields) {
    if (key == "q") q.push_back(value);
    else if (!body.contains(key)) body[key] = value;
  }
  if (q.size() == 1) body["q"] = q[0];
  else if (q.size() > 1) body["q"] = std::move(q);
  return body;
}

// GET /v1/attention's query as the POST body: numbers from their text.
nlohmann::json attention_query(const httplib::Request& req) {
  nlohmann::json body = {{"format", "html"}};
  for (const auto& [key, value] : req.params) {
    if (key == "ids") {
      body[key] = nlohmann::json::array();
      std::istringstream in(value);
      for (std::string id; in >> id;) {
        try {
          body[key].push_back(std::stoll(id));
        } catch (const std::exception&) {
          throw HttpError(400, "\"ids\" must be space-separated token ids, got '" + value + "'");
        }
      }
    } else if (key == "layer" || key == "head" || key == "beam") {
      try {
        body[key] = std::stoll(value);
      } catch (const std::exception&) {
        throw HttpError(400, "\"" + key + "\" must be a whole number, got '" + value + "'");
      }
    } else {
      body[key] = value;
    }
  }
  return body;
}

}  // namespace

HttpServer::HttpServer(Service& service, const HttpOptions& options)
    : service_(service), options_(options), listener_(options.connection, static_cast<size_t>(options.threads)) {
  listener_.set_payload_max_length(service.options().limits.max_body_bytes);
  // SO_REUSEADDR alone: a restarted server binds while the old one's connections are in TIME_WAIT,
  // but a second server on a port in use fails. cpp-httplib's default, SO_REUSEPORT, let two
  // servers bind one port and the kernel split the connections between them.
  listener_.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  add_routes();
  service.watch_clients(&Listener::client_gone);
}

int HttpServer::bind() {
  const int port = options_.port == 0 ? listener_.bind_to_any_port(options_.host)
                                      : (listener_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
  check(port > 0, "cannot listen on ", options_.host, ":", options_.port, " (in use, or not an address of this machine)");
  listener_.widen_backlog();
  return port;
}

void HttpServer::listen() { listener_.run(); }

void HttpServer::drain() {
  draining_ = true;
  listener_.drain();
}

void HttpServer::add_routes() {
  Service& s = service_;
  auto json_post = [this](const std::string& route, std::function<Outcome(const nlohmann::json&)> f) {
    listener_.Post(route, [this, f](const httplib::Request& req, httplib::Response& res) {
      const Clock::time_point start = Clock::now();
      write(res, answer([&] { return f(parse_body(req.body)); }));
      service_.metrics().latency(std::chrono::duration<double>(Clock::now() - start).count());
    });
  };
  json_post("/v1/translate", [&s](const nlohmann::json& b) { return s.translate(b); });
  json_post("/v1/score", [&s](const nlohmann::json& b) { return s.score(b); });
  json_post("/v1/classify", [&s](const nlohmann::json& b) { return s.classify(b); });
  json_post("/v1/attention", [&s](const nlohmann::json& b) { return s.attention(b); });
  listener_.Post("/translate", [&s](const httplib::Request& req, httplib::Response& res) {
    write(res, answer([&] { return s.libretranslate(libretranslate_body(req)); }));
  });
  listener_.Get("/v1/attention", [&s](const httplib::Request& req, httplib::Response& res) {
    write(res, answer([&] { return s.attention(attention_query(req)); }));
  });
  listener_.Get("/languages", [&s](const httplib::Request&, httplib::Response& res) { write(res, {200, s.languages(), ""}); });
  listener_.Get("/v1/models", [&s](const httplib::Request&, httplib::Response& res) { write(res, {200, s.models(), ""}); });
  listener_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    write(res, draining_            ? Outcome{503, {{"status", "draining"}}, ""}
               : !service_.ready() ? Outcome{503, {{"status", "loading"}}, ""}
                                   : Outcome{200, {{"status", "ok"}}, ""});
  });
  listener_.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) {
    res.set_content(s.metrics_text(), "text/plain; version=0.0.4");
  });
  listener_.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(page_html(), "text/html; charset=utf-8"); });
  // cpp-httplib's own refusals (no route, body too large, a request line it cannot read) as JSON.
  listener_.set_error_handler(httplib::Server::HandlerWithResponse([&s](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string what = res.status == 404   ? "no route " + req.method + " " + req.path + " (see docs/serve.md)"
                             : res.status == 413 ? "the body is larger than " + std::to_string(s.options().limits.max_body_bytes) +
                                                       " bytes (--max-body-bytes)"
                                                 : "bad request (HTTP status " + std::to_string(res.status) + ")";
    res.set_content(dumped({{"error", what}}), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  // Counted once the answer is final and before it is written (cpp-httplib's logger runs after):
  // a client that has its answer finds it in /metrics.
  listener_.set_post_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    static const char* known[] = {"/v1/translate", "/v1/score", "/v1/classify", "/v1/attention", "/v1/models",
                                  "/translate", "/languages", "/health", "/metrics", "/"};
    std::string route = "other";
    for (const char* k : known)
      if (req.path == k) route = k;
    s.metrics().request(route, res.status);
  });
}

}  // namespace attn::serve
