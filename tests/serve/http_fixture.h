// An attn serve HTTP server inside the test program, on a free loopback port, over the test models
// (serve_fixture.h); and a client.
#pragma once

#include <httplib.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
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
    while (!service_->ready()) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // as /health says "ok"
  }
  ~TestServer() {
    server_->drain();
    thread_.join();
    service_->stop();
  }
  int port() const { return port_; }
  Service& service() { return *service_; }
  size_t open_connections() const { return server_->open_connections(); }
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

// `attn serve ARGS --port 0` as a process of its own (its stderr in a file), for what needs the real
// binary: its resident memory, its signals, its exit code.
class ServerProcess {
 public:
  // ready: wait until /health says "ok" (the models warm), as a deployment's readiness probe does.
  explicit ServerProcess(const std::vector<std::string>& args, bool ready = true)
      : log_((fs::temp_directory_path() / ("attn_serve_proc_" + std::to_string(getpid()) + ".log")).string()) {
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      std::vector<std::string> all = {ATTN_BINARY, "serve", "--port", "0"};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(ATTN_BINARY, argv.data());
      _exit(127);
    }
    const std::regex listening("listening on http://[^:]+:(\\d+)/");
    for (int i = 0; i < 600 && port_ == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::smatch m;
      const std::string text = log();
      if (std::regex_search(text, m, listening)) port_ = std::stoi(m[1]);
      check(waitpid(pid_, &status_, WNOHANG) == 0, "attn serve exited: ", text);
    }
    check(port_ > 0, "attn serve did not start: ", log());
    for (int i = 0; ready && i < 6000; ++i) {
      httplib::Client c("127.0.0.1", port_);
      if (auto res = c.Get("/health"); res && res->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    check(!ready, "attn serve did not become ready within 60 s: ", log());
  }
  ~ServerProcess() {
    if (!exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
    }
    fs::remove(log_);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const {
    std::stringstream s;
    s << std::ifstream(log_).rdbuf();
    return s.str();
  }
  double resident_mib() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return 0;
  }
  // Sends SIGTERM and returns the exit code (-1: not a normal exit).
  int terminate() {
    kill(pid_, SIGTERM);
    waitpid(pid_, &status_, 0);
    exited_ = true;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(60, 0);
    return c;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0, status_ = 0;
  bool exited_ = false;
};

}  // namespace attn::serve::testing
