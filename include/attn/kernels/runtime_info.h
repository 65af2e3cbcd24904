// What attn runs on, for `attn info` and bug reports: the CPU, the kernels' instruction set, the
// libraries' versions, threads and the precisions' hardware support.
#pragma once

#include <string>

namespace attn {

std::string describe_runtime();  // several "key: value" lines

}  // namespace attn
