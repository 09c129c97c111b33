// Exports TorchScript fixtures the way users do: Python source run by
// Debian's /usr/bin/python3 with python3-torch (not a python3 earlier on
// PATH). Tests skip when that interpreter or its torch is missing.
#ifndef FEDBERRY_TESTS_TORCHSCRIPT_EXPORT_H_
#define FEDBERRY_TESTS_TORCHSCRIPT_EXPORT_H_

#include <cstdlib>
#include <fstream>
#include <string>

namespace fedberry::testing {

inline constexpr char kPython[] = "/usr/bin/python3";

inline bool HavePythonTorch() {
  static const bool have =
      std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
  return have;
}

// Runs `script` (Python that saves a module to sys.argv[1]) with `out` as
// its argument. True on success; the script's output goes to `out`.log.
inline bool ExportTorchScript(const std::string& script,
                              const std::string& out) {
  const std::string source = out + ".py";
  std::ofstream(source) << script;
  const std::string command = std::string(kPython) + " " + source + " " + out +
                              " >" + out + ".log 2>&1";
  return std::system(command.c_str()) == 0;
}

// A classifier for rows of `features` values with `classes` outputs.
inline std::string TabularScript(int features, int classes,
                                 bool with_loss = false) {
  return std::string(
             "import sys, torch\n"
             "from torch import nn\n"
             "class Net(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.fc1 = nn.Linear(") +
         std::to_string(features) +
         ", 16)\n"
         "        self.drop = nn.Dropout(0.1)\n"
         "        self.fc2 = nn.Linear(16, " +
         std::to_string(classes) +
         ")\n"
         "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
         "        return self.fc2(self.drop(torch.relu(self.fc1(x))))\n" +
         (with_loss
              ? "    @torch.jit.export\n"
                "    def loss(self, output: torch.Tensor, target: "
                "torch.Tensor) -> torch.Tensor:\n"
                "        return nn.functional.cross_entropy(output, target, "
                "label_smoothing=0.1)\n"
              : "") +
         "torch.manual_seed(0)\n"
         "torch.jit.script(Net()).save(sys.argv[1])\n";
}

// A small CNN with batch norm for [N, channels, size, size]; `traced`
// exports it with torch.jit.trace instead of script.
inline std::string CnnScript(int channels, int size, int classes,
                             bool traced = false) {
  return std::string(
             "import sys, torch\n"
             "from torch import nn\n"
             "class Net(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.conv = nn.Conv2d(") +
         std::to_string(channels) +
         ", 8, 3, padding=1)\n"
         "        self.bn = nn.BatchNorm2d(8)\n"
         "        self.fc = nn.Linear(8, " +
         std::to_string(classes) +
         ")\n"
         "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
         "        x = torch.relu(self.bn(self.conv(x)))\n"
         "        return self.fc(torch.flatten(nn.functional.adaptive_avg_"
         "pool2d(x, 1), 1))\n"
         "torch.manual_seed(0)\n" +
         (traced ? "m = torch.jit.trace(Net(), torch.zeros(2, " +
                       std::to_string(channels) + ", " + std::to_string(size) +
                       ", " + std::to_string(size) + "))\n"
                 : "m = torch.jit.script(Net())\n") +
         "m.save(sys.argv[1])\n";
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_TORCHSCRIPT_EXPORT_H_
