// libFuzzer entry for the http target (fuzz/targets.h).
#include <cstddef>
#include <cstdint>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::http({reinterpret_cast<const char*>(data), size});
  return 0;
}
