// The stop flag of training (include/attn/train/stop_signal.h). A signal handler may only touch a
// lock-free atomic and call async-signal-safe functions (write, _exit), which is all it does.
#include "attn/train/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace attn {

namespace {

std::atomic<int> g_stop_signals{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag is set from a signal handler");

void say(const char* text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_stop_signal(int sig) {
  if (g_stop_signals.fetch_add(1) > 0) {
    say("\nsecond signal: stopping now, without a checkpoint\n");
    ::_exit(128 + sig);
  }
  say("\nstopping after this step (a checkpoint is written; a second Ctrl-C stops at once)\n");
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress continue
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return g_stop_signals.load() > 0; }

void request_stop() { g_stop_signals.fetch_add(1); }

void clear_stop() { g_stop_signals.store(0); }

}  // namespace attn
