// Reverse-mode automatic differentiation (Marian's expression graph, reduced to a tape).
//
// A Var is a node of the computation: a value, and (once backward has reached it) the gradient
// of the loss with respect to that value. Each differentiable op in include/attn/ops/ computes its
// forward value at once and, when a Tape is active and an input requires a gradient, records a
// closure on the tape that turns the output's gradient into its inputs' gradients. Tape::backward
// walks the records once, newest first; gradients accumulate (+=).
//
// With no tape active (inference, or inside a NoGrad scope) ops record nothing and keep
// nothing alive: the same op code serves training and decoding.
#pragma once

#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/tensor/tensor.h"

namespace attn {

struct Node {
  Tensor value;
  Tensor grad;  // undefined until something flows back into it
  bool requires_grad = false;
};

class Var {
 public:
  Var() = default;
  explicit Var(Tensor value, bool requires_grad = false);

  bool defined() const { return node_ != nullptr; }
  const Tensor& value() const { return node_->value; }
  Tensor& value() { return node_->value; }
  const Shape& shape() const { return node_->value.shape(); }
  int64_t size(int64_t d) const { return node_->value.size(d); }
  int64_t dim() const { return node_->value.dim(); }
  bool requires_grad() const { return node_ && node_->requires_grad; }
  void set_requires_grad(bool on) { node_->requires_grad = on; }

  // The gradient, or an undefined tensor if nothing has flowed back yet.
  const Tensor& grad() const { return node_->grad; }
  // The gradient buffer, created as zeros (in the value's shape) on first use. Backward
  // closures accumulate into it.
  Tensor& grad_buffer() const;
  void zero_grad() const { node_->grad = Tensor(); }
  // Adds g (same shape, any strides) into the gradient.
  void accumulate_grad(const Tensor& g) const;

  Node* node() const { return node_.get(); }

 private:
  std::shared_ptr<Node> node_;
};

class Tape {
 public:
  void record(std::function<void()> backward) { records_.push_back(std::move(backward)); }
  // d loss / d loss = 1 (loss must have one element), then every record, newest first.
  // The tape is empty afterwards.
  void backward(Var& loss);
  // The same from a given output gradient (PyTorch's y.backward(dy)): dy has y's shape.
  void backward(Var& output, const Tensor& grad_output);
  void clear() { records_.clear(); }
  size_t size() const { return records_.size(); }

  // Gradients handed on as soon as they are final (data-parallel training starts summing them
  // across processes while backward still runs). Called before the forward pass: every op then
  // notes the first record that took one of `leaves` as an input; backward calls on_final(k)
  // right after the oldest such record of leaves[k] (the last that can add to its gradient; a leaf
  // no op took is final at the end), and poll() after every record.
  void watch(std::vector<const Node*> leaves, std::function<void(size_t)> on_final, std::function<void()> poll);
  // For needs_grad: the inputs of the op about to record.
  void note_inputs(std::initializer_list<const Var*> inputs);

 private:
  struct Watch {
    std::unordered_map<const Node*, size_t> index;  // leaf -> k
    std::vector<size_t> first_record;  // per leaf; SIZE_MAX: not an input yet
    std::function<void(size_t)> on_final;
    std::function<void()> poll;
  };
  void run_watched(Watch& w);
  std::vector<std::function<void()>> records_;
  std::shared_ptr<Watch> watch_;  // null: nobody watches
};

// The tape ops record on in this thread; nullptr when none (then ops record nothing).
Tape* active_tape();

// Makes `tape` active for its lifetime (and restores the previous one after).
class TapeScope {
 public:
  explicit TapeScope(Tape& tape);
  ~TapeScope();
  TapeScope(const TapeScope&) = delete;
  TapeScope& operator=(const TapeScope&) = delete;

 private:
  Tape* previous_;
};

// Inference inside a training program: no tape for its lifetime.
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  Tape* previous_;
};

// For op implementations: true when a tape is active and any input needs a gradient. The
// output Var is then marked requires_grad and the op records its backward.
bool needs_grad(std::initializer_list<const Var*> inputs);
Var make_output(Tensor value, bool requires_grad);
void record_backward(std::function<void()> backward);

}  // namespace attn
