// CTranslate2's model.bin: the binary spec that ctranslate2/specs/model_spec.py writes and
// src/models/model.cc reads (binary versions 2 to 6), little-endian:
//
//   u32 binary_version                       6 today
//   str spec_name, u32 spec_revision         ("TransformerSpec", 7); from version 2
//   u32 num_variables, then each, sorted by name:
//     str name, u8 rank, u32 dims[rank],
//     u8 dtype (0 float32, 1 int8, 2 int16, 3 int32, 4 float16, 5 bfloat16), u32 num_bytes, bytes
//     (before version 4: u8 item size, u32 item count)
//   u32 num_aliases, then each: str alias, str variable   (from version 3)
//   str = u16 length including a final NUL, the bytes, the NUL
//
// A variable equal element-wise to another is written once; the others name it as aliases (and
// CTranslate2 aliases "<alias>_scale" to "<variable>_scale" too). find() follows them.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "attn/tensor/tensor.h"

namespace attn::io {

enum class Ct2DType : uint8_t { f32 = 0, i8 = 1, i16 = 2, i32 = 3, f16 = 4, bf16 = 5 };
const char* ct2_dtype_name(Ct2DType t);
size_t ct2_dtype_size(Ct2DType t);

struct Ct2Variable {
  Shape shape;  // {} for a scalar
  Ct2DType dtype = Ct2DType::f32;
  std::string bytes;  // numel x the dtype's size
};

struct Ct2ModelBin {
  uint32_t binary_version = 6;
  std::string spec = "TransformerSpec";
  uint32_t spec_revision = 7;
  std::map<std::string, Ct2Variable> variables;
  std::map<std::string, std::string> aliases;  // alias -> the variable holding the data
  std::string source;                          // the file, for messages

  // The variable `name` names, through an alias (also "<alias>_scale"), or nullptr.
  const Ct2Variable* find(const std::string& name) const;
};

// Every structural error (truncated, a size that does not match its shape, an alias of nothing)
// names the file and the variable.
Ct2ModelBin read_ct2_model_bin(const std::string& path);
// Written atomically, variables in name order.
void write_ct2_model_bin(const std::string& path, const Ct2ModelBin& m);

// The values of a variable as float32 (integers converted, float16 and bfloat16 widened), in
// its shape; `name` names it in messages.
Tensor ct2_to_float(const Ct2Variable& v);
// A float32 variable over a tensor's values.
Ct2Variable ct2_from_float(const Tensor& t);
// A scalar variable of the given integer or float dtype.
Ct2Variable ct2_scalar(double value, Ct2DType dtype);
// A scalar's value; an error naming `name` when it is not a scalar.
double ct2_scalar_value(const Ct2Variable& v, const std::string& name, const std::string& source);

}  // namespace attn::io
