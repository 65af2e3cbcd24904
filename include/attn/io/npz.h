// NumPy's .npz: a zip archive of .npy files, one per array, named "<key>.npy". numpy.savez stores
// them, numpy.savez_compressed deflates them; both are read. Keys are returned without ".npy".
// Dtypes and conversions are those of npy.h ('<f8' becomes F32, BF16 is written as '<f4').
#pragma once

#include <map>
#include <string>

#include "attn/tensor/tensor.h"

namespace attn::io {

std::map<std::string, Tensor> load_npz(const std::string& path);

// Atomic; a stored (uncompressed) zip with correct CRC-32s that numpy.load reads.
void save_npz(const std::string& path, const std::map<std::string, Tensor>& tensors);

}  // namespace attn::io
