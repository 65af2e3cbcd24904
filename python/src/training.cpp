// attn.train's engine: the library's training plan (attn/train/plan.h) on a thread of its
// own, so that Python's main thread stays free to pass the run's events to a callback and to take
// Ctrl-C (python/attn/_training.py). A KeyboardInterrupt asks for the stop SIGINT asks the binary
// for (train/stop_signal.h): the step ends, a checkpoint is written, train returns.
#include <pybind11/stl.h>

#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "attn/train/stop_signal.h"
#include "binding.h"
#include "attn/train/plan.h"

namespace attn::python {
namespace {

class TrainRun {
 public:
  TrainRun(const std::string& config, const std::vector<std::string>& sets, bool resume) {
    std::vector<Override> overrides(sets.begin(), sets.end());
    as_value_error([&] { with_paths({config}, [&] { plan_ = plan_training(config, overrides, resume); }); });
    clear_stop();
    std::packaged_task<void()> task([this] { run_training(plan_); });
    done_ = task.get_future();
    thread_ = std::thread(std::move(task));
  }
  ~TrainRun() {
    if (!thread_.joinable()) return;
    request_stop();  // dropped unfinished (e.g. an exception in Python): stop at the next step
    py::gil_scoped_release release;
    thread_.join();
  }
  const std::string& model_dir() const { return plan_.model_dir; }

  // Waits up to `seconds` (forever: None); true once training ended. The end's exception is raised by finish().
  bool wait(const py::object& seconds) {
    const bool forever = seconds.is_none();
    const auto d = std::chrono::duration<double>(forever ? 0.0 : seconds.cast<double>());
    py::gil_scoped_release release;
    if (forever) done_.wait();
    return forever || done_.wait_for(d) == std::future_status::ready;
  }
  void finish() {
    {
      py::gil_scoped_release release;
      thread_.join();
    }
    done_.get();  // rethrows the training's error
  }

 private:
  TrainPlan plan_;
  std::future<void> done_;
  std::thread thread_;
};

}  // namespace

void bind_training(py::module_& m) {
  py::class_<TrainRun>(m, "_TrainRun")
      .def(py::init<const std::string&, const std::vector<std::string>&, bool>(), py::arg("config"), py::arg("sets"),
           py::arg("resume"))
      .def_property_readonly("model_dir", &TrainRun::model_dir)
      .def("wait", &TrainRun::wait, py::arg("seconds"))
      .def("finish", &TrainRun::finish);
  m.def("_request_stop", &request_stop);
  m.def("_stop_requested", &stop_requested);
}

}  // namespace attn::python
