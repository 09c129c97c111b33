#include "server/input_checks.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_text.h"

namespace fedberry::server {
namespace {

// Beyond these no board measures in one round: a year of wall or CPU time,
// 4096 busy cores, a petabyte moved or resident.
constexpr double kMaxSeconds = 365.0 * 24 * 3600;
constexpr double kMaxUtilization = 4096;
constexpr double kMaxRate = 1e12;  // samples per second
constexpr uint64_t kMaxBytes = uint64_t{1} << 50;
constexpr uint64_t kMaxCount = uint64_t{1} << 32;

double Ceiling(const google::protobuf::FieldDescriptor& f) {
  if (f.name() == "cpu_utilization") return kMaxUtilization;
  if (f.name() == "samples_per_second") return kMaxRate;
  return kMaxSeconds;  // every other double reading is seconds
}

uint64_t Ceiling64(const google::protobuf::FieldDescriptor& f) {
  return f.cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_UINT32
             ? kMaxCount
             : kMaxBytes;
}

}  // namespace

absl::Status CheckJoin(v1::JoinRequest& request, const InputLimits& limits) {
  const std::string& name = request.client_name();
  if (name.empty()) {
    return absl::InvalidArgumentError("join request has an empty client_name");
  }
  if (name.size() > limits.max_name_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("client_name is ", name.size(), " bytes; at most ",
                     limits.max_name_bytes, " are allowed (it starts ",
                     base::Printable(name, 32), ")"));
  }
  if (size_t at = base::FirstUnprintable(name); at != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "client_name %s has byte 0x%02x at offset %d; names are printable "
        "ASCII",
        base::Printable(name), static_cast<unsigned char>(name[at]), at));
  }
  if (request.num_samples() > limits.max_declared_samples) {
    return absl::InvalidArgumentError(absl::StrCat(
        "join request declares ", request.num_samples(), " samples; at most ",
        limits.max_declared_samples, " are allowed"));
  }
  if (request.sample_bytes() > limits.max_sample_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "join request declares samples of ", request.sample_bytes(),
        " bytes; at most ", limits.max_sample_bytes, " are allowed"));
  }
  if (request.boards() > limits.max_gateway_boards) {
    return absl::InvalidArgumentError(
        absl::StrCat("join request speaks for ", request.boards(),
                     " boards; a gateway may speak for at most ",
                     limits.max_gateway_boards));
  }
  // Kept, logged, written to records and shown: cut on a character
  // boundary, as the JSON writers and the page need whole characters.
  v1::DeviceInfo& d = *request.mutable_device();
  for (std::string* s :
       {d.mutable_hostname(), d.mutable_architecture(), d.mutable_cpu_model(),
        d.mutable_kernel(), d.mutable_os()}) {
    *s = base::ValidUtf8(*s, limits.max_device_text_bytes);
  }
  *request.mutable_client_version() =
      base::ValidUtf8(request.client_version(), limits.max_version_bytes);
  return absl::OkStatus();
}

absl::Status CheckTrainMetrics(const v1::TrainMetrics& m) {
  const auto bad = [](const char* field, double value, const char* want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "update metrics: ", field, " is ", value, "; it must be ", want));
  };
  if (!std::isfinite(m.train_loss())) {
    return bad("train_loss", m.train_loss(), "finite");
  }
  if (!(m.train_accuracy() >= 0 && m.train_accuracy() <= 1)) {
    return bad("train_accuracy", m.train_accuracy(), "within [0, 1]");
  }
  if (!(m.train_seconds() >= 0 && m.train_seconds() <= kMaxSeconds)) {
    return bad("train_seconds", m.train_seconds(), "finite and not negative");
  }
  return absl::OkStatus();
}

std::vector<std::string> SanitizeResources(v1::ResourceMetrics& r) {
  using google::protobuf::FieldDescriptor;
  std::vector<std::string> cleared;
  const google::protobuf::Reflection* reflection = r.GetReflection();
  const google::protobuf::Descriptor* descriptor = r.GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* f = descriptor->field(i);
    if (!reflection->HasField(r, f)) continue;
    bool ok = true;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE: {
        const double v = reflection->GetDouble(r, f);
        ok = std::isfinite(v) && v >= 0 && v <= Ceiling(*f);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT64:
        ok = reflection->GetUInt64(r, f) <= Ceiling64(*f);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        ok = reflection->GetUInt32(r, f) <= Ceiling64(*f);
        break;
      default:
        break;
    }
    if (!ok) {
      reflection->ClearField(&r, f);
      cleared.push_back(f->name());
    }
  }
  return cleared;
}

uint64_t MaxUpdateWeight(const v1::TrainConfig& task, uint64_t declared,
                         uint64_t received, uint32_t boards) {
  if (task.local_steps() > 0) {
    return uint64_t{task.local_steps()} *
           std::max<uint32_t>(1, task.batch_size()) *
           std::max<uint32_t>(1, boards);
  }
  return uint64_t{std::max<uint32_t>(1, task.local_epochs())} *
         (declared + received);
}

absl::Status CheckUpdateWeight(uint64_t claimed, uint64_t allowed) {
  if (claimed == 0) {
    return absl::InvalidArgumentError(
        "update header has num_samples 0; an update must weigh something");
  }
  if (claimed > allowed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "update claims ", claimed, " samples; its task allows at most ",
        allowed,
        " (the samples declared at join and received by data moves, "
        "times the epochs, or steps x batch)"));
  }
  return absl::OkStatus();
}

v1::BoardCondition SanitizeCondition(const v1::BoardCondition& untrusted) {
  v1::BoardCondition condition = untrusted;
  condition.set_declined(base::Printable(untrusted.declined(), 256));
  if (condition.has_soc_celsius() &&
      !(std::isfinite(condition.soc_celsius()) &&
        condition.soc_celsius() > -60 && condition.soc_celsius() < 200)) {
    condition.clear_soc_celsius();
  }
  return condition;
}

}  // namespace fedberry::server
