#include "connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace attn::serve {
namespace {

using Clock = std::chrono::steady_clock;

// Waits up to ms for `events` on sock; false on timeout or error.
bool wait_for(int sock, short events, int ms) {
  pollfd p{sock, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, ms < 0 ? 0 : ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if ((peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len)
            : ::getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
    return;
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

// A socket whose reads fail once the request's deadline has passed. Reads go through a buffer:
// cpp-httplib reads the request line and headers one byte at a time, which unbuffered cost a poll
// and a recv per byte (about 300 system calls for a 150-byte request, measured with strace -c).
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(int sock, int write_ms) : sock_(sock), write_ms_(write_ms) {}
  void set_deadline(Clock::time_point t) { deadline_ = t; }
  // Bytes already received and not yet read (the next request's, when a client sends ahead).
  bool has_buffered() const { return at_ < end_; }

  bool is_readable() const override {
    if (has_buffered()) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
    return left > 0 && wait_for(sock_, POLLIN, static_cast<int>(left));
  }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, write_ms_); }
  ssize_t read(char* ptr, size_t size) override {
    if (!has_buffered()) {
      if (!is_readable()) return -1;
      if (size >= sizeof buffer_) return receive(ptr, size);  // a large read: straight in
      const ssize_t n = receive(buffer_, sizeof buffer_);
      if (n <= 0) return n;
      at_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - at_);
    std::memcpy(ptr, buffer_ + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  ssize_t receive(char* ptr, size_t size) {
    ssize_t n;
    do n = ::recv(sock_, ptr, size, 0);
    while (n < 0 && errno == EINTR);
    return n;
  }

  int sock_, write_ms_;
  Clock::time_point deadline_;
  char buffer_[4096];
  size_t at_ = 0, end_ = 0;  // buffer_[at_, end_) is received and not read yet
};

thread_local int t_client = -1;  // the socket of the request this thread is handling

// Marks the thread as handling `sock`'s requests while it lives.
struct Handling {
  explicit Handling(int sock) { t_client = sock; }
  ~Handling() { t_client = -1; }
};

}  // namespace

bool Listener::client_gone() {
  if (t_client < 0) return false;
  pollfd p{t_client, POLLRDHUP, 0};
  int n;
  do n = ::poll(&p, 1, 0);
  while (n < 0 && errno == EINTR);
  return n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void Listener::widen_backlog() { ::listen(svr_sock_, limits_.backlog); }

void Listener::drain() {
  draining_ = true;
  stop();
}

// Serves the requests of one connection: each must arrive whole within request_ms of its first
// byte; between requests the connection waits idle_ms (in slices, to notice a drain).
bool Listener::process_and_close_socket(socket_t sock) {
  DeadlineStream stream(sock, limits_.write_ms);
  const Handling handling(sock);
  bool ok = true;
  for (size_t n = 0; n < limits_.requests_per_connection && ok && !draining_; ++n) {
    int waited = 0;
    const int wait = n == 0 ? limits_.request_ms : limits_.idle_ms;
    while (!draining_ && waited < wait && !stream.has_buffered() && !wait_for(sock, POLLIN, 100)) waited += 100;
    if (draining_ || waited >= wait) break;
    stream.set_deadline(Clock::now() + std::chrono::milliseconds(limits_.request_ms));
    bool closed = false;
    const bool last = n + 1 == limits_.requests_per_connection;
    ok = process_request(stream, last || draining_, closed, nullptr) && !closed;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

bool Listener::serve(httplib::Stream& stream) {
  bool ok = true;
  for (size_t n = 0; n < limits_.requests_per_connection && ok && stream.is_readable(); ++n) {
    bool closed = false;
    ok = process_request(stream, n + 1 == limits_.requests_per_connection, closed, nullptr) && !closed;
  }
  return ok;
}

}  // namespace attn::serve
