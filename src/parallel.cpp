#include "attn/parallel.h"

#include <omp.h>

namespace attn {

int region_threads(bool worth) {
  if (!worth || omp_in_parallel()) return 1;
  return omp_get_max_threads();
}

}  // namespace attn
