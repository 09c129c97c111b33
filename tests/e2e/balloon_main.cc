// A memory balloon for the watchdog's end-to-end test: allocates and
// touches memory in 32 MiB pieces until MemAvailable falls below
// --target_available_kib (never more than --max_mib), prints
// "inflated <MiB> MiB", holds it until SIGTERM or SIGINT, then frees it and
// exits. While it holds, it tops up when MemAvailable rises above the
// target again (other processes ending, caches shrinking), so the pressure
// lasts until it is told to go. Usage:
// fedberry-test-balloon <target_available_kib> <max_mib>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

volatile sig_atomic_t stop = 0;

long AvailableKib() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long value = 0;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemAvailable:") return value;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool help = argc == 2 && (std::strcmp(argv[1], "--help") == 0 ||
                                  std::strcmp(argv[1], "-h") == 0);
  if (argc != 3) {
    std::fprintf(help ? stdout : stderr,
                 "usage: %s <target_available_kib> <max_mib>\n"
                 "Allocates memory until MemAvailable < target, holds it "
                 "until SIGTERM.\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  const long target = std::atol(argv[1]);
  const long max_mib = std::atol(argv[2]);
  signal(SIGTERM, [](int) { stop = 1; });
  signal(SIGINT, [](int) { stop = 1; });
  constexpr size_t kPiece = 32u << 20;
  std::vector<char*> pieces;
  auto inflate = [&] {
    while (!stop && AvailableKib() >= target &&
           static_cast<long>(pieces.size()) * 32 < max_mib) {
      char* p = static_cast<char*>(std::malloc(kPiece));
      if (p == nullptr) break;
      std::memset(p, 0x5a, kPiece);  // touch every page
      pieces.push_back(p);
    }
  };
  inflate();
  std::printf("inflated %zu MiB, MemAvailable %ld kB\n", pieces.size() * 32,
              AvailableKib());
  std::fflush(stdout);
  size_t held = pieces.size();
  while (!stop) {
    usleep(20000);
    inflate();
    if (pieces.size() != held) {
      held = pieces.size();
      std::printf("topped up to %zu MiB, MemAvailable %ld kB\n", held * 32,
                  AvailableKib());
      std::fflush(stdout);
    }
  }
  for (char* p : pieces) std::free(p);
  std::printf("freed\n");
  return 0;
}
