// An attn serve HTTP server inside the test program, on a free loopback port, over the test models
// (serve_fixture.h); and a client.
#pragma once

#include <httplib.h>

#include <memory>
#include <thread>

#include "http.h"
#include "serve_fixture.h"

namespace attn::serve::testing {

class TestServer {
 public:
  explicit TestServer(const ServiceOptions& service = {}, const HttpOptions& http = {}) : service_(make_service(service)) {
    HttpOptions o = http;
    o.port = 0;
    server_ = std::make_unique<HttpServer>(*service_, o);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->listen(); });
  }
  ~TestServer() {
    server_->drain();
    thread_.join();
    service_->stop();
  }
  int port() const { return port_; }
  Service& service() { return *service_; }
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(60, 0);
    c->set_connection_timeout(10, 0);
    return c;
  }

 private:
  std::unique_ptr<Service> service_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace attn::serve::testing
