// Fixed glibc malloc thresholds for processes that train or evaluate.
//
// Why: glibc adapts its mmap threshold (and with it the trim threshold) to
// the largest block freed so far, which in a training client settles near
// 1.5 MiB. Every batch allocates and frees a few MB of activations and
// gradients just above or below that line, so glibc hands the memory back to
// the kernel (munmap, or trimming the top of the heap) and page-faults it in
// again on the next batch: measured at about 16 s of a 70 s default job, and
// 1.75 s -> 1.26 s for one 10k evaluation at batch 500. With fixed thresholds
// (blocks under 16 MiB come from the heap, whose top is trimmed only past
// 64 MiB free) a batch reuses the last batch's pages.
//
// Memory is still given back where that is the point: the watchdog calls
// malloc_trim(0) when it pauses training, which trims regardless of these
// thresholds.
#ifndef FEDBERRY_RUNTIME_HEAP_TUNING_H_
#define FEDBERRY_RUNTIME_HEAP_TUNING_H_

#include <cstddef>

namespace fedberry::runtime {

inline constexpr size_t kTrainingMmapThreshold = size_t{16} << 20;
inline constexpr size_t kTrainingTrimThreshold = size_t{64} << 20;

// Sets the thresholds above. Call first thing in main(), before any thread
// starts. Returns false when the C library does not take them (not glibc, or
// mallopt refused); the process then runs with the library's defaults.
bool TuneHeapForTraining();

// The server: the thresholds above (evaluation batches, and decoded
// updates, reuse heap pages) and at most two malloc arenas, where glibc
// would give each RPC thread its own, each keeping up to 64 MiB of freed
// updates. 100 emulated boards pushing a 4.8 MB model (bench/scale_bench.sh,
// this machine): an arena per thread peaked at 1372 MiB with 73 ms of
// server CPU per update; two arenas at 607 MiB with 54 ms; a 4 MiB mmap
// threshold on top saved little memory (591 MiB) and cost 281 ms per update
// (every update mapped, faulted in and unmapped).
inline constexpr int kServingArenas = 2;
bool TuneHeapForServing();

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_HEAP_TUNING_H_
