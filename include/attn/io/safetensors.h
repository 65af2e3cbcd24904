// safetensors (https://huggingface.co/docs/safetensors), the checkpoint format of attn.
//
//   [8 bytes: N, little-endian u64][N bytes: JSON header][data buffer]
//   header = {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//             "__metadata__": {"key": "value", ...}}
//
// Offsets are relative to the start of the data buffer; the tensors tile it exactly, with no
// gaps or overlaps. Dtypes read and written: F32, BF16, I32, I64, I8.
//
// Checksum: attn writes the CRC-32 of the data buffer into __metadata__ as "crc32" (8 lowercase
// hex digits) and checks it on load, so a flipped byte in the weights is an error naming the
// file, not a silently different model. Files without the key (older attn, PyTorch's
// safetensors) load unchecked; the metadata a load returns never holds the key.
#pragma once

#include <map>
#include <string>

#include "attn/tensor/tensor.h"

namespace attn::io {

// Maps the file and returns tensors that borrow the mapping (zero copy; the mapping lives as long
// as any tensor from it). Everything is validated; a bad file throws attn::Error naming the file
// and, where it applies, the tensor. If `metadata` is given it receives "__metadata__".
std::map<std::string, Tensor> load_safetensors(const std::string& path,
                                               std::map<std::string, std::string>* metadata = nullptr);

// The same tensors copied into memory of attn's own, the mapping's pages given back as each is
// copied: loading a model holds its weights once at the peak, where borrowing and then copying
// (a model owns its parameters) would hold them twice.
std::map<std::string, Tensor> load_safetensors_copied(const std::string& path);

// Writes atomically (see write_file_atomic), with the data's "crc32" added to `metadata` (which
// may not hold that key itself). Tensors may be non-contiguous views; they are written
// dense, in name order. The header is padded with spaces so the data buffer starts 64-byte
// aligned in the file.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace attn::io
