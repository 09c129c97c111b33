#include "runtime/fd_limit.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {
namespace {

uint64_t FromRlim(rlim_t v) {
  return v == RLIM_INFINITY ? kNoFdLimit : static_cast<uint64_t>(v);
}
rlim_t ToRlim(uint64_t v) {
  return v == kNoFdLimit ? RLIM_INFINITY : static_cast<rlim_t>(v);
}

class RealFdLimitSystem : public FdLimitSystem {
 public:
  absl::StatusOr<FdLimits> Get() override {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) != 0) {
      return absl::InternalError(
          absl::StrCat("getrlimit(RLIMIT_NOFILE): ", strerror(errno)));
    }
    return FdLimits{FromRlim(r.rlim_cur), FromRlim(r.rlim_max)};
  }
  absl::Status SetSoft(uint64_t soft) override {
    absl::StatusOr<FdLimits> limits = Get();
    if (!limits.ok()) return limits.status();
    const rlimit r{ToRlim(soft), ToRlim(limits->hard)};
    if (setrlimit(RLIMIT_NOFILE, &r) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("setrlimit(RLIMIT_NOFILE): ", strerror(errno)));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> CountOpen() override {
    DIR* dir = opendir("/proc/self/fd");
    if (dir == nullptr && errno == EMFILE) {
      // Reading the count takes a descriptor: none left is the answer.
      absl::StatusOr<FdLimits> limits = Get();
      if (limits.ok()) return limits->soft;
    }
    if (dir == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("/proc/self/fd: ", strerror(errno)));
    }
    uint64_t n = 0;
    while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
    closedir(dir);
    return n > 0 ? n - 1 : 0;  // not the directory's own descriptor
  }
};

}  // namespace

FdLimitSystem& FdLimitSystem::Real() {
  static RealFdLimitSystem* system = new RealFdLimitSystem;
  return *system;
}

std::string FdLimitText(uint64_t limit) {
  return limit == kNoFdLimit ? "unlimited" : absl::StrCat(limit);
}

std::string FdLimitRaise::Describe() const {
  if (before.soft == after.soft) {
    return absl::StrCat("open-file limit ", FdLimitText(after.soft),
                        " (already the hard limit)");
  }
  return absl::StrCat("open-file limit raised from ", FdLimitText(before.soft),
                      " to ", FdLimitText(after.soft), " (the hard limit)");
}

absl::StatusOr<FdLimitRaise> RaiseFdLimit(FdLimitSystem& system) {
  absl::StatusOr<FdLimits> before = system.Get();
  if (!before.ok()) return before.status();
  FdLimitRaise raise{*before, *before};
  if (before->soft >= before->hard) return raise;
  if (absl::Status s = system.SetSoft(before->hard); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat("cannot raise the open-file limit from ",
                               FdLimitText(before->soft), " to its hard limit ",
                               FdLimitText(before->hard), ": ", s.message()));
  }
  absl::StatusOr<FdLimits> after = system.Get();
  if (!after.ok()) return after.status();
  raise.after = *after;
  return raise;
}

FdUsageWatch::FdUsageWatch(FdLimitSystem& system,
                           std::function<void(const std::string&)> warn)
    : system_(system), warn_(std::move(warn)) {}

void FdUsageWatch::Check() {
  absl::StatusOr<FdLimits> limits = system_.Get();
  absl::StatusOr<uint64_t> open = system_.CountOpen();
  if (!limits.ok() || !open.ok() || limits->soft == kNoFdLimit ||
      limits->soft == 0) {
    return;
  }
  const double used =
      static_cast<double>(*open) / static_cast<double>(limits->soft);
  const std::string fix =
      "raise LimitNOFILE= in the unit, or ulimit -n, or serve fewer boards "
      "per gateway";
  // At the limit the next accept fails: a descriptor or two stay spare for
  // files the server itself opens.
  if (said_ < 2 && *open + 2 >= limits->soft) {
    warn_(absl::StrCat("out of file descriptors: ", *open, " open of ",
                       FdLimitText(limits->soft),
                       "; new board connections are refused until some close (",
                       fix, ")"));
    said_ = 2;
  } else if (said_ < 1 && used >= 0.9) {
    warn_(absl::StrCat("file descriptors nearly used up: ", *open, " open of ",
                       FdLimitText(limits->soft), "; each board holds one (",
                       fix, ")"));
    said_ = 1;
  } else if (said_ > 0 && used < 0.8) {
    said_ = 0;
  }
}

}  // namespace fedberry::runtime
