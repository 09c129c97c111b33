#include "runtime/heap_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fedberry::runtime {

bool TuneHeapForTraining() {
#if defined(__GLIBC__)
  // Setting either one also turns off glibc's dynamic adjustment of both.
  const bool mmap_ok =
      mallopt(M_MMAP_THRESHOLD, static_cast<int>(kTrainingMmapThreshold)) == 1;
  const bool trim_ok =
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrainingTrimThreshold)) == 1;
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

bool TuneHeapForServing() {
#if defined(__GLIBC__)
  const bool thresholds_ok = TuneHeapForTraining();
  return mallopt(M_ARENA_MAX, kServingArenas) == 1 && thresholds_ok;
#else
  return false;
#endif
}

}  // namespace fedberry::runtime
