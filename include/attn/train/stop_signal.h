// A graceful stop of training on SIGINT or SIGTERM: the first signal asks the training loop to
// finish its step, write a checkpoint and return; a second one ends the process at once (exit
// 128 + the signal's number), for a user who does not want to wait for the save.
#pragma once

namespace attn {

// Installs the handlers of SIGINT and SIGTERM (the command line's job, once, before training).
void install_stop_handlers();

// Whether a stop was asked for (by a signal or by request_stop) and not cleared since.
bool stop_requested();

// What the first signal does, for callers (and tests) without a signal; clear_stop undoes it.
void request_stop();
void clear_stop();

}  // namespace attn
