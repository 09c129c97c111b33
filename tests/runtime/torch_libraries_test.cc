#include "runtime/torch_libraries.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace fedberry::runtime::torch_libraries_test {
namespace {

// /proc/PID/maps lines of a client on the repaired copies and on Debian's.
constexpr char kRepaired[] =
    "55d0c0000000-55d0c0100000 r--p 00000000 fe:01 1 /w/build/bin/x\n"
    "7f0000000000-7f0001000000 r-xp 00000000 fe:01 2 "
    "/w/build/lib/fedberry/libtorch_cpu.so.1.13\n"
    "7f0001000000-7f0001001000 rw-p 00000000 00:00 0 \n"
    "7f0002000000-7f0002100000 r-xp 00000000 fe:01 3 "
    "/w/build/lib/fedberry/libc10.so.1.13\n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n";
constexpr char kDebian[] =
    "7f0000000000-7f0001000000 r-xp 00000000 fe:01 2 "
    "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13\n"
    "7f0003000000-7f0003100000 r--p 00000000 fe:01 5 "
    "/usr/lib/x86_64-linux-gnu/libopencv_core.so.4.6.0\n"
    "7f0003100000-7f0003200000 r-xp 00100000 fe:01 5 "
    "/usr/lib/x86_64-linux-gnu/libopencv_core.so.4.6.0\n"
    "7f0004000000-7f0004100000 r-xp 00000000 fe:01 6 "
    "/usr/lib/x86_64-linux-gnu/libavcodec.so.59.37.100\n";

TEST(MappedTorch, FindsLibTorchAndTheLibrariesItNeverCalls) {
  MappedTorch repaired = MappedTorchOf(kRepaired);
  EXPECT_EQ(repaired.torch_cpu, "/w/build/lib/fedberry/libtorch_cpu.so.1.13");
  EXPECT_TRUE(repaired.unused.empty());

  MappedTorch debian = MappedTorchOf(kDebian);
  EXPECT_EQ(debian.torch_cpu, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13");
  ASSERT_EQ(debian.unused.size(), 2u);  // a file mapped twice counts once
  EXPECT_EQ(debian.unused[0],
            "/usr/lib/x86_64-linux-gnu/libopencv_core.so.4.6.0");
}

TEST(MappedTorch, NoLibTorchGivesNoPath) {
  EXPECT_EQ(MappedTorchOf("").torch_cpu, "");
  EXPECT_EQ(
      MappedTorchOf("7f00-7f01 r-xp 0 fe:01 2 /lib/libc.so.6\n").torch_cpu, "");
}

TEST(RepairedTorchDir, IsBesideTheProgramsFolder) {
  EXPECT_EQ(RepairedTorchDir("/w/build/bin/fedberry-client", "lib/fedberry"),
            "/w/build/lib/fedberry");
  EXPECT_EQ(RepairedTorchDir("/usr/bin/fedberry-server", "lib/fedberry"),
            "/usr/lib/fedberry");
}

TEST(UnrepairedTorchWarning, SilentOnTheCopies) {
  EXPECT_EQ(
      UnrepairedTorchWarning(MappedTorchOf(kRepaired), "/w/build/lib/fedberry"),
      "");
  EXPECT_EQ(UnrepairedTorchWarning(MappedTorch{}, "/w/build/lib/fedberry"), "");
}

TEST(UnrepairedTorchWarning, NamesWhatWasLoadedAndTheFolderExpected) {
  const std::string warning =
      UnrepairedTorchWarning(MappedTorchOf(kDebian), "/w/build/lib/fedberry");
  EXPECT_TRUE(absl::StrContains(
      warning, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"))
      << warning;
  EXPECT_TRUE(absl::StrContains(warning, "/w/build/lib/fedberry")) << warning;
  EXPECT_TRUE(absl::StrContains(warning, "fedberry_slim_torch")) << warning;
  EXPECT_TRUE(absl::StrContains(warning, "2 of them mapped")) << warning;
}

}  // namespace
}  // namespace fedberry::runtime::torch_libraries_test
