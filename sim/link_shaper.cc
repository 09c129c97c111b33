#include "sim/link_shaper.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/process.h"

namespace fedberry::sim {
namespace {
constexpr char kIp[] = "/usr/sbin/ip";
constexpr char kTc[] = "/usr/sbin/tc";
}  // namespace

LinkShaper::LinkShaper(std::string log_path)
    : log_path_(std::move(log_path)),
      tag_(absl::StrFormat("fb%05d", static_cast<int>(getpid() % 100000))) {}

LinkShaper::~LinkShaper() { Teardown(); }

absl::Status LinkShaper::Run(const std::vector<std::string>& argv) {
  auto p = Process::Spawn(argv, log_path_);
  if (!p.ok()) {
    return absl::UnavailableError(
        absl::StrCat(p.status().message(),
                     " (install iproute2; link shaping needs `ip` "
                     "and `tc`)"));
  }
  while (!p->Poll()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (p->exit()->code != 0) {
    return absl::UnavailableError(absl::StrCat(
        "`", absl::StrJoin(argv, " "), "` failed with exit code ",
        p->exit()->code, " (link shaping needs root; see ", log_path_, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ShapedLink> LinkShaper::Add(int index, double mbit) {
  if (index < 0 || index > 250) {
    return absl::InvalidArgumentError("link shaping supports clients 0..250");
  }
  ShapedLink link;
  link.netns = absl::StrCat(tag_, "-c", index);
  // Interface names stay within 15 characters: fb12345h3 / fb12345n3.
  const std::string host_if = absl::StrCat(tag_, "h", index);
  const std::string ns_if = absl::StrCat(tag_, "n", index);
  // 10.<200 + pid % 50>.<index>.0/30: the host end .1, the client .2.
  const std::string subnet =
      absl::StrCat("10.", 200 + getpid() % 50, ".", index, ".");
  const std::string host_ip = absl::StrCat(subnet, 1);
  const std::string ns_ip = absl::StrCat(subnet, 2);
  link.host_address = host_ip;
  const std::string rate = absl::StrFormat("%.3fmbit", mbit);
  // Burst: at least one MTU and ~10 ms of the rate.
  const std::string burst = absl::StrCat(
      std::max<int>(16000, static_cast<int>(mbit * 1e6 / 8 / 100)));
  if (absl::Status s = Run({kIp, "netns", "add", link.netns}); !s.ok()) {
    return s;
  }
  namespaces_.push_back(link.netns);
  const std::vector<std::vector<std::string>> setup = {
      {kIp, "link", "add", host_if, "type", "veth", "peer", "name", ns_if,
       "netns", link.netns},
      {kIp, "addr", "add", host_ip + "/30", "dev", host_if},
      {kIp, "link", "set", host_if, "up"},
      {kIp, "-n", link.netns, "addr", "add", ns_ip + "/30", "dev", ns_if},
      {kIp, "-n", link.netns, "link", "set", ns_if, "up"},
      {kIp, "-n", link.netns, "link", "set", "lo", "up"},
      // Download: host -> client leaves through the host end.
      {kTc, "qdisc", "add", "dev", host_if, "root", "tbf", "rate", rate,
       "burst", burst, "latency", "100ms"},
      // Upload: client -> host leaves through the namespace end.
      {kIp, "netns", "exec", link.netns, kTc, "qdisc", "add", "dev", ns_if,
       "root", "tbf", "rate", rate, "burst", burst, "latency", "100ms"},
  };
  for (const auto& cmd : setup) {
    if (absl::Status s = Run(cmd); !s.ok()) return s;
  }
  return link;
}

std::vector<std::string> LinkShaper::Wrap(
    const ShapedLink& link, const std::vector<std::string>& argv) const {
  std::vector<std::string> out = {kIp, "netns", "exec", link.netns};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

void LinkShaper::Teardown() {
  for (const std::string& ns : namespaces_) {
    (void)Run({kIp, "netns", "del", ns});
  }
  namespaces_.clear();
}

}  // namespace fedberry::sim
