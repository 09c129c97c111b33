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

// The server: its RPC threads each hold a decoded update (a model's
// worth) while they check it, so it serves as well as evaluates. Blocks
// from 4 MiB (model-sized tensors) are mapped and given back when freed,
// smaller ones (evaluation batches) come from the heap as for training, and
// the threads share at most two malloc arenas: with one arena per thread
// and the training thresholds, a gateway serving 100 boards a 4.8 MB model
// peaked at 1.5 GiB of RSS for 0.3 GiB of live heap; with these, at 0.5.
inline constexpr size_t kServingMmapThreshold = size_t{4} << 20;
inline constexpr int kServingArenas = 2;
bool TuneHeapForServing();

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_HEAP_TUNING_H_
