#include "attn/autodiff/var.h"

#include <algorithm>
#include <cstdint>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"

namespace attn {

Var::Var(Tensor value, bool requires_grad) : node_(std::make_shared<Node>()) {
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
}

Tensor& Var::grad_buffer() const {
  if (!node_->grad.defined()) node_->grad = Tensor::zeros(node_->value.shape());
  return node_->grad;
}

void Var::accumulate_grad(const Tensor& g) const {
  if (!(g.shape() == shape()))
    fail("autodiff: gradient of shape ", shape_str(g.shape()),
         " for a value of shape ", shape_str(shape()));
  if (!node_->grad.defined()) {
    node_->grad = g.clone();
    return;
  }
  add_into(node_->grad, g);
}

static thread_local Tape* current_tape = nullptr;

Tape* active_tape() { return current_tape; }

TapeScope::TapeScope(Tape& tape) : previous_(current_tape) { current_tape = &tape; }
TapeScope::~TapeScope() { current_tape = previous_; }
NoGrad::NoGrad() : previous_(current_tape) { current_tape = nullptr; }
NoGrad::~NoGrad() { current_tape = previous_; }

void Tape::backward(Var& loss) {
  if (!(loss.value().numel() == 1))
    fail("backward: the loss must have one element, its shape is ",
         shape_str(loss.shape()));
  backward(loss, Tensor::full(loss.shape(), 1.0f));
}

void Tape::backward(Var& output, const Tensor& grad_output) {
  output.accumulate_grad(grad_output);
  // A backward closure must not record new ops.
  NoGrad no_grad;
  if (watch_) {
    std::shared_ptr<Watch> w = std::move(watch_);  // once: the watch ends with this backward
    run_watched(*w);
  }
  for (size_t i = records_.size(); i-- > 0;) {
    records_[i]();
    records_[i] = nullptr;  // frees what the closure kept alive as soon as it is done
  }
  records_.clear();
}

void Tape::watch(std::vector<const Node*> leaves, std::function<void(size_t)> on_final, std::function<void()> poll) {
  watch_ = std::make_shared<Watch>(Watch{{}, std::vector<size_t>(leaves.size(), SIZE_MAX), std::move(on_final),
                                         std::move(poll)});
  for (size_t k = 0; k < leaves.size(); ++k) watch_->index.emplace(leaves[k], k);
}

void Tape::note_inputs(std::initializer_list<const Var*> inputs) {
  if (!watch_) return;
  for (const Var* v : inputs) {
    if (!v || !v->defined()) continue;
    const auto it = watch_->index.find(v->node());
    if (it != watch_->index.end() && watch_->first_record[it->second] == SIZE_MAX)
      watch_->first_record[it->second] = records_.size();
  }
}

// Every record, newest first, each leaf handed on after the oldest record that took it. An op
// records after needs_grad noted its inputs, and ops it calls record in between, so every record
// that can touch a leaf has an index >= the noted one: the leaf is final once the walk passes it.
void Tape::run_watched(Watch& w) {
  std::vector<size_t> order(w.first_record.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  auto key = [&w](size_t k) { return w.first_record[k] == SIZE_MAX ? size_t{0} : w.first_record[k]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
  size_t next = 0;
  for (size_t i = records_.size(); i-- > 0;) {
    records_[i]();
    records_[i] = nullptr;
    for (; next < order.size() && w.first_record[order[next]] != SIZE_MAX && w.first_record[order[next]] >= i; ++next)
      w.on_final(order[next]);
    w.poll();
  }
  records_.clear();
  for (; next < order.size(); ++next) w.on_final(order[next]);
}

bool needs_grad(std::initializer_list<const Var*> inputs) {
  if (!current_tape) return false;
  current_tape->note_inputs(inputs);
  for (const Var* v : inputs)
    if (v && v->requires_grad()) return true;
  return false;
}

Var make_output(Tensor value, bool requires_grad) { return Var(std::move(value), requires_grad); }

void record_backward(std::function<void()> backward) {
  check(current_tape != nullptr, "autodiff: record_backward without an active tape");
  current_tape->record(std::move(backward));
}

}  // namespace attn
