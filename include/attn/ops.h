// Every differentiable op of attn. Each op computes its value at once and, when a Tape is
// active and an input requires a gradient, records its backward (see autodiff/var.h).
#pragma once

#include "attn/ops/attention.h"
#include "attn/ops/dropout.h"
#include "attn/ops/elementwise.h"
#include "attn/ops/embedding.h"
#include "attn/ops/layer_norm.h"
#include "attn/ops/loss.h"
#include "attn/ops/matmul.h"
#include "attn/ops/reduce.h"
#include "attn/ops/shape.h"
#include "attn/ops/softmax.h"
