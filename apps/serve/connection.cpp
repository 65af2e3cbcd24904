#include "connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "framing.h"

namespace attn::serve {

using Clock = std::chrono::steady_clock;

// One client connection. The loop owns it; while `busy` a worker has it and the loop touches
// nothing but `busy` (under `m`), so that each field has one thread at a time.
struct Connection {
  int fd = -1;
  std::string peer, local;
  int peer_port = 0, local_port = 0;
  std::string in;    // received, not yet served
  Framing framing;   // of `in`, as last read
  Clock::time_point since;          // the current wait's start: accepted, or the last answer sent
  Clock::time_point request_start;  // the request's first byte (the accept, for a new connection)
  bool requesting = false;          // bytes of a request are in, or it is a new connection
  size_t served = 0;                // requests answered
  std::mutex m;
  bool busy = false;  // a worker has it (guarded by m)
};

namespace {

constexpr int kSweepMs = 100;           // deadlines are checked this often
constexpr size_t kWriteBuffer = 65536;  // a response up to this size goes out in one send(2)

void address_of(const sockaddr_storage& a, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof buf);
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
    port = ntohs(v6->sin6_port);
  }
  ip = buf;
}

// Sends all of data on a non-blocking socket, waiting for room up to `ms` in all.
bool send_all(int fd, const char* data, size_t size, int ms) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLOUT, 0};
    if (left <= 0 || (::poll(&p, 1, static_cast<int>(left)) <= 0 && errno != EINTR)) return false;
  }
  return true;
}

// A request already received whole, as cpp-httplib reads it: its bytes from the connection's
// buffer; the answer collected and sent at once (a status line, headers and body in one send(2),
// where cpp-httplib writes them in several), larger ones straight out.
class BufferStream : public httplib::Stream {
 public:
  BufferStream(const Connection& c, size_t at, size_t end, int write_ms) : c_(c), at_(at), end_(end), write_ms_(write_ms) {}

  bool is_readable() const override { return at_ < end_; }
  bool is_writable() const override { return ok_; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, end_ - at_);
    std::memcpy(ptr, c_.in.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (out_.size() + size <= kWriteBuffer) {
      out_.append(ptr, size);
      return static_cast<ssize_t>(size);
    }
    if (!flush() || !(ok_ = send_all(c_.fd, ptr, size, write_ms_))) return -1;
    return static_cast<ssize_t>(size);
  }
  bool flush() {
    ok_ = ok_ && send_all(c_.fd, out_.data(), out_.size(), write_ms_);
    out_.clear();
    return ok_;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.peer;
    port = c_.peer_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.local;
    port = c_.local_port;
  }
  socket_t socket() const override { return c_.fd; }

 private:
  const Connection& c_;
  size_t at_, end_;
  int write_ms_;
  std::string out_;
  bool ok_ = true;
};

thread_local int t_client = -1;  // the socket of the request this thread is handling
thread_local std::shared_ptr<void> t_held;  // what the response being sent holds (hold_until_sent)

// Marks the thread as handling `sock`'s requests while it lives.
struct Handling {
  explicit Handling(int sock) { t_client = sock; }
  ~Handling() { t_client = -1; }
};

// The loop's own answers (it closes the connection after them).
std::string json_error(int status, const std::string& message) {
  const std::string body = nlohmann::json{{"error", message}}.dump();
  const char* reason = status == 400 ? "Bad Request" : status == 408 ? "Request Timeout" : "Request Header Fields Too Large";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// What a connection's bytes call for next.
enum class Next { wait, serve, refuse };

// Frames the request at the front of c.in; answers an "Expect: 100-continue" itself (the header
// taken out, so that cpp-httplib does not answer it again) once the headers are in.
Next frame(Connection& c, const ConnectionLimits& limits, size_t max_body) {
  c.framing = frame_request(c.in, limits.max_header_bytes, max_body);
  if (c.framing.expect_continue) {
    c.in.erase(c.framing.expect_line, c.framing.expect_length);
    c.framing = frame_request(c.in, limits.max_header_bytes, max_body);
    if (c.framing.state == Framing::State::partial) {
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      send_all(c.fd, kContinue, sizeof kContinue - 1, limits.write_ms);
    }
  }
  switch (c.framing.state) {
    case Framing::State::partial: return Next::wait;
    case Framing::State::complete:
    case Framing::State::body_too_large: return Next::serve;  // cpp-httplib answers 413
    default: return Next::refuse;
  }
}

void refusal(Connection& c, int write_ms) {
  const std::string r = c.framing.state == Framing::State::headers_too_large
                            ? json_error(431, "the request line and headers are longer than " +
                                                  std::to_string(c.in.size()) + " bytes allow (--max-header-bytes)")
                            : json_error(400, "the request's body cannot be framed: a bad Content-Length or "
                                              "Transfer-Encoding, or both");
  send_all(c.fd, r.data(), r.size(), write_ms);
}

}  // namespace

Listener::Listener(const ConnectionLimits& limits, size_t workers) : limits_(limits), workers_(workers) {}

Listener::~Listener() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_changed_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  for (auto& [fd, c] : connections_) ::close(fd);
  if (epoll_ >= 0) ::close(epoll_);
  if (wake_ >= 0) ::close(wake_);
}

bool Listener::client_gone() {
  if (t_client < 0) return false;
  pollfd p{t_client, POLLRDHUP, 0};
  int n;
  do n = ::poll(&p, 1, 0);
  while (n < 0 && errno == EINTR);
  return n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void Listener::widen_backlog() {
  ::listen(svr_sock_, limits_.backlog);
  ::fcntl(svr_sock_, F_SETFL, ::fcntl(svr_sock_, F_GETFL) | O_NONBLOCK);
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_NOFILE, &files);
  }
  // room for the models' files, the workers' and the library's own descriptors
  const size_t reserve = 64 + workers_;
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur > reserve)
    limits_.max_connections = std::min(limits_.max_connections, static_cast<size_t>(files.rlim_cur) - reserve);
}

void Listener::drain() {
  draining_ = true;
  if (wake_ >= 0) wake();
}

void Listener::wake() const {
  const uint64_t one = 1;
  const ssize_t n = ::write(wake_, &one, sizeof one);
  (void)n;
}

void Listener::arm(const Connection& c) const {
  epoll_event e{};
  e.events = EPOLLIN | EPOLLONESHOT;
  e.data.fd = c.fd;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &e);
}

void Listener::run() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  check(epoll_ >= 0 && wake_ >= 0, "attn serve: cannot make the connections' epoll: ", std::strerror(errno));
  for (int fd : {static_cast<int>(svr_sock_), wake_}) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e);
  }
  scratch_.resize(65536);
  for (size_t i = 0; i < workers_; ++i) threads_.emplace_back([this] { work(); });
  if (draining_) wake();  // drained before it ran
  loop();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_changed_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Listener::loop() {
  std::vector<epoll_event> events(256);
  Clock::time_point swept = Clock::now();
  for (;;) {
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), kSweepMs);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == svr_sock_) {
        accept_all();
      } else if (fd == wake_) {
        uint64_t count;
        while (::read(wake_, &count, sizeof count) > 0) {
        }
        std::vector<int> done;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          done.swap(finished_);
        }
        for (int d : done) close_connection(d);
      } else {
        const auto it = connections_.find(fd);
        if (it != connections_.end()) on_readable(*it->second);
      }
    }
    if (draining_ && svr_sock_ != INVALID_SOCKET) {  // stop accepting: the port is free at once
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, svr_sock_, nullptr);
      ::close(svr_sock_);
      svr_sock_ = INVALID_SOCKET;
    }
    const Clock::time_point now = Clock::now();
    if (draining_ || now - swept >= std::chrono::milliseconds(kSweepMs)) {
      sweep();
      swept = now;
    }
    if (draining_ && connections_.empty()) return;
  }
}

void Listener::accept_all() {
  for (;;) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    const int fd = ::accept4(svr_sock_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && evict("", false)) continue;
      if (errno == EMFILE || errno == ENFILE) {  // every descriptor is answering: accept again later
        epoll_event e{};
        e.data.fd = svr_sock_;
        ::epoll_ctl(epoll_, EPOLL_CTL_MOD, svr_sock_, &e);
        accepting_ = false;
      }
      return;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    address_of(a, c->peer, c->peer_port);
    if ((connections_.size() >= limits_.max_connections && !evict("", false)) ||
        (per_peer_[c->peer] >= limits_.max_per_client && !evict(c->peer, true))) {
      ::close(fd);
      continue;
    }
    sockaddr_storage l{};
    len = sizeof l;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&l), &len) == 0) address_of(l, c->local, c->local_port);
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    c->since = c->request_start = Clock::now();
    c->requesting = true;
    ++per_peer_[c->peer];
    ++open_;
    epoll_event e{};
    e.events = EPOLLIN | EPOLLONESHOT;
    e.data.fd = fd;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e);
    connections_[fd] = std::move(c);
  }
}

void Listener::on_readable(Connection& c) {
  { std::lock_guard<std::mutex> lock(c.m); }  // after the worker that armed it last (what it wrote)
  const size_t most = limits_.max_header_bytes + payload_max_length_ + 65536;  // a request framed whole
  bool closed = false;
  for (;;) {
    const ssize_t n = ::recv(c.fd, scratch_.data(), scratch_.size(), 0);
    if (n > 0) {
      if (!c.requesting) {
        c.requesting = true;
        c.request_start = Clock::now();
      }
      c.in.append(scratch_.data(), static_cast<size_t>(n));
      if (static_cast<size_t>(n) == scratch_.size() && c.in.size() < most) continue;
      break;
    }
    if (n < 0 && errno == EINTR) continue;
    closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    break;
  }
  const Next next = c.in.empty() ? Next::wait : frame(c, limits_, payload_max_length_);
  if (next == Next::serve) return hand_off(c);
  if (next == Next::refuse) refusal(c, limits_.write_ms);
  if (closed || next == Next::refuse || draining_) return close_connection(c.fd);
  arm(c);
}

void Listener::hand_off(Connection& c) {
  {
    std::lock_guard<std::mutex> lock(c.m);
    c.busy = true;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.push_back(&c);
    ++busy_;
  }
  ready_changed_.notify_one();
}

void Listener::sweep() {
  const Clock::time_point now = Clock::now();
  std::vector<int> expired;
  for (auto& [fd, c] : connections_) {
    {
      std::lock_guard<std::mutex> lock(c->m);
      if (c->busy) continue;
    }
    const bool headers = c->framing.headers_end > 0;
    const Clock::time_point deadline =
        !c->requesting ? c->since + std::chrono::milliseconds(limits_.idle_ms)
                       : c->request_start + std::chrono::milliseconds(headers ? limits_.request_ms
                                                                              : std::min(limits_.header_ms, limits_.request_ms));
    if (!draining_ && now < deadline) continue;
    if (c->requesting && !c->in.empty() && !draining_) {
      const std::string r = json_error(408, std::string("the request did not arrive whole within ") +
                                                (headers ? "--request-ms" : "--header-ms"));
      ::send(fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    expired.push_back(fd);
  }
  for (int fd : expired) close_connection(fd);
  if (!accepting_ && !draining_) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = svr_sock_;
    ::epoll_ctl(epoll_, EPOLL_CTL_MOD, svr_sock_, &e);
    accepting_ = true;
  }
}

bool Listener::evict(const std::string& peer, bool same_peer) {
  Connection* oldest = nullptr;
  for (auto& [fd, c] : connections_) {
    if (same_peer && c->peer != peer) continue;
    {
      std::lock_guard<std::mutex> lock(c->m);
      if (c->busy) continue;
    }
    const Clock::time_point waiting = c->requesting ? c->request_start : c->since;
    if (oldest == nullptr || waiting < (oldest->requesting ? oldest->request_start : oldest->since)) oldest = c.get();
  }
  if (oldest == nullptr) return false;
  close_connection(oldest->fd);
  return true;
}

void Listener::close_connection(int fd) {
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  const auto peer = per_peer_.find(it->second->peer);
  if (peer != per_peer_.end() && --peer->second == 0) per_peer_.erase(peer);
  ::close(fd);  // leaves the epoll set with it
  connections_.erase(it);
  --open_;
}

void Listener::work() {
  for (;;) {
    Connection* c = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_changed_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (ready_.empty()) return;
      c = ready_.front();
      ready_.pop_front();
    }
    const bool keep = serve_connection(*c) && !draining_;
    if (keep) {
      {
        std::lock_guard<std::mutex> lock(c->m);
        c->busy = false;
      }
      arm(*c);  // the loop has it again from here
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
      if (!keep) finished_.push_back(c->fd);
    }
    if (!keep) wake();
  }
}

// Serves the whole requests c holds, in order; what is left is the next request's start.
bool Listener::serve_connection(Connection& c) {
  const Handling handling(c.fd);
  for (;;) {
    const bool whole = c.framing.state == Framing::State::complete;
    const bool last = ++c.served >= limits_.requests_per_connection || draining_ || !whole;
    BufferStream stream(c, c.framing.start, c.framing.end, limits_.write_ms);
    bool closed = false;
    const bool ok = process_request(stream, last, closed, nullptr);
    const bool sent = stream.flush();
    t_held.reset();  // the response is out (or its connection failed): its memory is free
    if (!sent || !ok || closed || last) return false;
    c.in.erase(0, c.framing.end);
    c.since = Clock::now();
    c.requesting = !c.in.empty();
    c.request_start = c.since;
    c.framing = {};
    if (c.in.empty()) return true;
    const Next next = frame(c, limits_, payload_max_length_);
    if (next == Next::wait) return true;
    if (next == Next::refuse) {
      refusal(c, limits_.write_ms);
      return false;
    }
  }
}

void Listener::hold_until_sent(std::shared_ptr<void> hold) { t_held = std::move(hold); }

bool Listener::serve(httplib::Stream& stream) {
  bool ok = true;
  for (size_t n = 0; n < limits_.requests_per_connection && ok && stream.is_readable(); ++n) {
    bool closed = false;
    ok = process_request(stream, n + 1 == limits_.requests_per_connection, closed, nullptr) && !closed;
    t_held.reset();
  }
  return ok;
}

}  // namespace attn::serve
