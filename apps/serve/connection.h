// The connections of attn serve: cpp-httplib parses requests and routes them, and attn owns the
// sockets, so that a connection holds a thread only while its request is handled:
//   - one event-loop thread (epoll) accepts, and reads every connection's bytes without blocking
//     into its buffer until a whole request is there (framing.h: line, headers, body); a worker
//     thread then parses it from those bytes (cpp-httplib's process_request over a Stream of the
//     buffer), waits for its answer and writes it, and gives the connection back to the loop for
//     the next request (keep-alive). A slow or idle client costs a buffer, not a thread: 1,000
//     slow-loris connections once held all 64 threads and made the server unreachable (issue 50);
//   - the headers must arrive within header_ms and the whole request within request_ms of its
//     first byte (of the accept, for a new connection), however slowly its bytes trickle in; an
//     idle keep-alive connection closes after idle_ms; the headers are at most max_header_bytes;
//   - at most max_connections are open, and max_per_client from one address: past either, the
//     connection that has waited longest without a whole request (idle, or trickling) is closed to
//     make room, and a new one is refused only when every one is being answered;
//   - the process's open-file limit is raised to its hard limit when the server binds (the soft
//     default, 1,024, is less than the connections a server holds).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <httplib.h>

namespace attn::serve {

struct ConnectionLimits {
  int header_ms = 5000;            // to receive a request's line and headers
  int request_ms = 10000;          // to receive one whole request
  int idle_ms = 5000;              // keep-alive: wait for the next request
  int write_ms = 10000;            // to send a response
  size_t requests_per_connection = 1000;
  int backlog = 1024;
  size_t max_header_bytes = 16384;  // a request's line and headers
  size_t max_connections = 10000;   // open at once (within the open-file limit)
  size_t max_per_client = 512;      // open at once from one client address
};

struct Connection;

class Listener : public httplib::Server {
 public:
  // workers: threads handling whole requests at once (HttpOptions::threads).
  Listener(const ConnectionLimits& limits, size_t workers);
  ~Listener() override;
  // Re-listens on the bound socket with limits.backlog (cpp-httplib's compiled-in backlog is 5),
  // raises the open-file limit and makes the socket non-blocking for the loop.
  void widen_backlog();
  // Serves connections until drain(); returns once every request received is answered.
  void run();
  // Stops accepting and closes the connections without a whole request (those being answered
  // finish theirs); run() then returns.
  void drain();
  // Serves the requests one connection's bytes hold, from a stream already in hand (no socket, no
  // deadline: the http fuzz target's bytes).
  bool serve(httplib::Stream& stream);
  // Whether the client of the request this thread is handling has closed its connection (or
  // half-closed it: HTTP/1.1 clients do not, and nobody would read the answer); false on a thread
  // handling none. One poll(2) without waiting.
  static bool client_gone();
  // Keeps `hold` (the answer's share of the memory budget, answer_size.h) until this thread has
  // sent the response of the request it is handling: the answer's text lives until then.
  static void hold_until_sent(std::shared_ptr<void> hold);
  // Connections open now (the tests' and /metrics' view).
  size_t open_connections() const { return open_.load(); }

 private:
  void loop();
  void accept_all();
  // Reads what the socket has; hands a whole request to the workers, re-arms otherwise.
  void on_readable(Connection& c);
  // Closes connections past their deadlines (and all waiting ones once draining).
  void sweep();
  // Makes room for a connection from `peer`: closes the one waiting longest without a whole
  // request (from that address when `same_peer`); false when every one is being answered.
  bool evict(const std::string& peer, bool same_peer);
  void close_connection(int fd);
  void refuse(Connection& c, int status, const std::string& message);
  void hand_off(Connection& c);
  void work();
  // Serves c's whole requests on this worker thread; true: keep it open (given back to the loop).
  bool serve_connection(Connection& c);
  void arm(const Connection& c) const;
  void wake() const;

  ConnectionLimits limits_;
  size_t workers_;
  std::atomic<bool> draining_{false};
  std::atomic<size_t> open_{0};
  int epoll_ = -1, wake_ = -1;  // the loop's epoll and the eventfd that wakes it
  bool accepting_ = true;
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;  // the loop's, by socket
  std::unordered_map<std::string, size_t> per_peer_;                  // open connections per address
  std::vector<char> scratch_;                                         // the loop's receive buffer
  // Connections with a whole request, for the workers; and those the workers are done with.
  std::mutex mutex_;
  std::condition_variable ready_changed_;
  std::deque<Connection*> ready_;
  std::vector<int> finished_;  // to close (the loop owns every close: a socket number is reused)
  size_t busy_ = 0;            // connections a worker holds
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace attn::serve
