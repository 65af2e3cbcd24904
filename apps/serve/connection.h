// The connections of attn serve: cpp-httplib's server with its socket handling replaced, so that
//   - one request (line, headers and body) must arrive within a deadline, however slowly its bytes
//     trickle in: a slow-loris client holds a connection thread for that long at most, where
//     cpp-httplib's per-read timeout would let it hold one for as long as it keeps sending;
//   - an idle keep-alive connection closes after idle_ms, at once when the server drains;
//   - the listen backlog is large enough for a burst of clients connecting at once.
#pragma once

#include <atomic>
#include <cstddef>

#include <httplib.h>

namespace attn::serve {

struct ConnectionLimits {
  int request_ms = 10000;          // to receive one whole request
  int idle_ms = 5000;              // keep-alive: wait for the next request
  int write_ms = 10000;            // to send a response
  size_t requests_per_connection = 1000;
  int backlog = 1024;
};

class Listener : public httplib::Server {
 public:
  explicit Listener(const ConnectionLimits& limits) : limits_(limits) {}
  // Re-listens on the bound socket with limits.backlog (cpp-httplib's compiled-in backlog is 5).
  void widen_backlog();
  // Stops waiting for more requests on open connections (those computing are answered), then
  // stops accepting; listen() returns once every connection is done.
  void drain();
  // Serves the requests one connection's bytes hold, from a stream already in hand (no socket, no
  // deadline: the http fuzz target's bytes), as process_and_close_socket serves a socket's.
  bool serve(httplib::Stream& stream);
  // Whether the client of the request this thread is handling has closed its connection (or
  // half-closed it: HTTP/1.1 clients do not, and nobody would read the answer); false on a thread
  // handling none. One poll(2) without waiting.
  static bool client_gone();

 private:
  bool process_and_close_socket(socket_t sock) override;
  ConnectionLimits limits_;
  std::atomic<bool> draining_{false};
};

}  // namespace attn::serve
