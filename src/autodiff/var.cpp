#include "attn/autodiff/var.h"

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
  for (size_t i = records_.size(); i-- > 0;) {
    records_[i]();
    records_[i] = nullptr;  // frees what the closure kept alive as soon as it is done
  }
  records_.clear();
}

bool needs_grad(std::initializer_list<const Var*> inputs) {
  if (!current_tape) return false;
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
