// libFuzzer entry for the safetensors target (fuzz/targets.h).
#include <cstddef>
#include <cstdint>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::safetensors({reinterpret_cast<const char*>(data), size});
  return 0;
}
