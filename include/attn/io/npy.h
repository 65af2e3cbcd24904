// NumPy's .npy format (one array per file; also the members of an .npz archive).
//
//   "\x93NUMPY" major minor, header length (u16 for 1.0, u32 for 2.0/3.0), then a Python dict
//   literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces and
//   '\n', then the raw array.
//
// Read: '<f4' -> F32, '<f8' -> F32 (converted), '<i4' -> I32, '<i8' -> I64, '|b1' -> I32 (0/1).
// fortran_order arrays are transposed into C order on load. Written: version 1.0, C order,
// F32 '<f4', I32 '<i4', I64 '<i8'; BF16 is widened to '<f4' (numpy has no bfloat16; exact).
#pragma once

#include <string>
#include <string_view>

#include "attn/tensor/tensor.h"

namespace attn::io {

// Parses one .npy image; `where` names it in error messages ("x.npz: member 'emb'").
Tensor parse_npy(std::string_view bytes, const std::string& where);

// The .npy image of `t` (dense, C order; `t` may be any view).
std::string npy_bytes(const Tensor& t);

Tensor load_npy(const std::string& path);
void save_npy(const std::string& path, const Tensor& t);  // atomic

}  // namespace attn::io
