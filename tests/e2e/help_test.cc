// Every binary answers --help with its own flags and exit status 0, as shell
// and systemd tooling expect, and still refuses an unknown flag.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace fedberry::help_test {
namespace {

struct Outcome {
  int status = -1;
  std::string output;
};

Outcome Execute(const std::string& command) {
  Outcome run;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    run.output.append(buffer.data(), n);
  }
  const int raw = pclose(pipe);
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return run;
}

struct Binary {
  const char* name;
  const char* flag;  // one of its own flags, listed by --help
};

class HelpTest : public ::testing::TestWithParam<Binary> {};

TEST_P(HelpTest, HelpExitsZeroAndUnknownFlagsDoNot) {
  const std::string bin = std::string(FEDBERRY_BIN_DIR) + "/" + GetParam().name;
  for (const char* help : {"--help", "--helpfull", "-help"}) {
    SCOPED_TRACE(help);
    const Outcome run = Execute(bin + " " + help);
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find(GetParam().flag), std::string::npos)
        << run.output;
  }
  const Outcome bad = Execute(bin + " --no_such_flag_here");
  EXPECT_NE(bad.status, 0) << bad.output;
  EXPECT_NE(bad.output.find("no_such_flag_here"), std::string::npos)
      << bad.output;
}

// The test instruments are fedberry-emulated-client's alone: the installed
// client neither lists nor accepts them.
TEST(InstalledClient, HasNoTestInstruments) {
  const std::string bin = std::string(FEDBERRY_BIN_DIR) + "/fedberry-client";
  const Outcome help = Execute(bin + " --help");
  EXPECT_EQ(help.status, 0) << help.output;
  for (const char* flag :
       {"--attack", "--compute_slowdown", "--data_fraction", "--pause_every",
        "--pause_seconds", "--memory_readings_dir"}) {
    SCOPED_TRACE(flag);
    EXPECT_EQ(help.output.find(flag + 2), std::string::npos) << help.output;
    const Outcome run = Execute(bin + " " + flag + "=2");
    EXPECT_NE(run.status, 0) << run.output;
    EXPECT_NE(run.output.find(flag + 2), std::string::npos) << run.output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Binaries, HelpTest,
    ::testing::Values(Binary{"fedberry-server", "max_update_ratio"},
                      Binary{"fedberry-client", "server"},
                      Binary{"fedberry-emulated-client", "compute_slowdown"},
                      Binary{"fedberry-sim", "clients"},
                      Binary{"fedberry-report", "input"},
                      Binary{"fedberry-ckpt", "json"},
                      Binary{"fedberry-loadgen", "boards"}),
    [](const ::testing::TestParamInfo<Binary>& info) {
      std::string name = info.param.name;
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace fedberry::help_test
