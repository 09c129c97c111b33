#include "client/server_ready_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "base/testing/simulated_clock.h"

namespace fedberry::client::server_ready_file_test {
namespace {

namespace fs = std::filesystem;

class ServerReadyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("server_ready_file_test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "server.addr").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string path_;
  std::atomic<bool> stop_{false};
  const std::function<bool()> stopped_ = [this] { return stop_.load(); };
};

TEST_F(ServerReadyFileTest, ReturnsOnceTheServerWroteItsAddress) {
  std::ofstream(path_ + ".tmp") << "127.0.0.1:5000\n";
  std::thread server([&] {
    // An empty file is not an address yet.
    std::ofstream(path_).flush();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fs::rename(path_ + ".tmp", path_);
  });
  EXPECT_TRUE(
      WaitForServerReadyFile(path_, absl::ZeroDuration(), stopped_).ok());
  server.join();
  std::ifstream in(path_);
  std::string address;
  std::getline(in, address);
  EXPECT_EQ(address, "127.0.0.1:5000");
}

TEST_F(ServerReadyFileTest, GivesUpAfterItsTimeoutNamingTheFile) {
  SimulatedClock clock;
  std::thread time([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    clock.Advance(absl::Seconds(61));
  });
  const absl::Status s = WaitForServerReadyFile(
      path_, absl::Seconds(60), stopped_, clock, absl::Milliseconds(1));
  time.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find(path_), std::string::npos) << s;
}

TEST_F(ServerReadyFileTest, AStopEndsTheWait) {
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop_ = true;
  });
  const absl::Status s =
      WaitForServerReadyFile(path_, absl::ZeroDuration(), stopped_);
  stopper.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
}

}  // namespace
}  // namespace fedberry::client::server_ready_file_test
