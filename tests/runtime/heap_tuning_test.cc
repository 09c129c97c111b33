#include "runtime/heap_tuning.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace fedberry::runtime::heap_tuning_test {
namespace {

#if defined(__GLIBC__)
TEST(HeapTuning, BatchSizedBlocksComeFromTheHeapAndStayThere) {
  ASSERT_TRUE(TuneHeapForTraining());
  // A block of a batch's size (4 MiB, above glibc's default 128 KiB mmap
  // threshold) comes from the heap, not from its own mmap...
  const size_t size = size_t{4} << 20;
  const struct mallinfo2 before = mallinfo2();
  void* block = std::malloc(size);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, size);
  const struct mallinfo2 with_block = mallinfo2();
  EXPECT_EQ(with_block.hblks, before.hblks);
  // In use from the heap: the heap may already have had room for it (after
  // other tests in this process), so its size need not grow.
  EXPECT_GE(with_block.uordblks, before.uordblks + size);
  // ...and freeing it keeps the pages for the next batch (the top of the
  // heap is trimmed only past 64 MiB free).
  std::free(block);
  const struct mallinfo2 after_free = mallinfo2();
  EXPECT_EQ(after_free.arena, with_block.arena);
  // An explicit trim (what the watchdog does when it pauses) still gives
  // the freed pages back.
  EXPECT_EQ(malloc_trim(0), 1);
}

// The server keeps the training thresholds (only its arenas are fewer):
// a decoded update of a 6 MiB model reuses heap pages.
TEST(HeapTuning, AServersModelSizedBlocksComeFromTheHeap) {
  ASSERT_TRUE(TuneHeapForServing());
  const struct mallinfo2 before = mallinfo2();
  void* update = std::malloc(size_t{6} << 20);
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(mallinfo2().hblks, before.hblks);
  std::free(update);
}
#endif

}  // namespace
}  // namespace fedberry::runtime::heap_tuning_test
