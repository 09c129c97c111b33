// Runs a shell command and returns what it printed (stdout and stderr), for
// end-to-end tests of the binaries.
#ifndef FEDBERRY_TESTS_RUN_COMMAND_H_
#define FEDBERRY_TESTS_RUN_COMMAND_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace fedberry::testing {

inline std::string RunCommand(const std::string& cmd, int* exit_code) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_RUN_COMMAND_H_
