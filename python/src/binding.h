// What the files of the Python module share: each class's registration, and the mapping of
// attn's errors onto Python's exceptions (docs/python.md, "Errors"):
//   a bad argument (what the command line would refuse as a flag) -> ValueError,
//   a file or directory that does not exist                        -> FileNotFoundError,
//   any other attn::Error                                          -> attn.Error,
// each with the message the binary prints.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace attn::python {

namespace py = pybind11;

void bind_translator(py::module_& m);
void bind_classifier(py::module_& m);
void bind_weights(py::module_& m);
void bind_training(py::module_& m);

// Runs f; an attn::Error it throws becomes a ValueError with the same message.
void as_value_error(const std::function<void()>& f);
// Runs f; an attn::Error it throws becomes a FileNotFoundError when one of `paths` does not exist
// (the binary's message kept), else it goes on as attn.Error.
void with_paths(const std::vector<std::string>& paths, const std::function<void()>& f);

// An object's thread count (threads=N) on the thread that computes, for one call. OpenMP's count
// is per thread (nthreads-var), so one set where the object was made did not reach a
// ThreadPoolExecutor's worker, which used every core (issue 50); each call that computes holds one
// of these, and the caller's thread gets its own count back afterwards. 0: the thread's own count.
class CallThreads {
 public:
  explicit CallThreads(int n);
  ~CallThreads();
  CallThreads(const CallThreads&) = delete;
  CallThreads& operator=(const CallThreads&) = delete;

 private:
  int before_ = 0;
};

// Raises the KeyboardInterrupt (or other exception) a signal handler left for Python, if any:
// called with the GIL held between pieces of work released from it, so Ctrl-C ends a long call
// without waiting for the rest of its work (issue 50).
void check_signals();
// check_signals from a thread that released the GIL (it takes the GIL back for the check): the
// library's `between` callbacks (Translator::search_all and score, translate_file, classify_texts).
void between_calls();

}  // namespace attn::python
