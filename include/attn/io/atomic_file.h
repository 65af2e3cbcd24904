// Whole-file reads and crash-safe writes. write_file_atomic writes a temporary file in the same
// directory, fsyncs it, renames it over the target and fsyncs the directory, so after a crash
// (or kill -9) the target is either the old complete file or the new complete file, never a mix.
#pragma once

#include <string>

namespace attn::io {

// The whole file as bytes; throws attn::Error naming the path if it cannot be read.
std::string read_file(const std::string& path);

// Replaces `path` with `bytes` atomically (temp file + fsync + rename + directory fsync).
// A process killed mid-write may leave a "<path>.tmp.<pid>.<n>" file behind, never a
// half-written `path`.
void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace attn::io
