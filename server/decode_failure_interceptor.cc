#include "server/decode_failure_interceptor.h"

#include <spdlog/spdlog.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/log_text.h"
#include "fedberry/v1/federation.grpc.pb.h"
#include "google/protobuf/descriptor.h"

namespace fedberry::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// "/fedberry.v1.Federation/Join" and the service's other methods.
bool IsFederationMethod(absl::string_view path) {
  const std::string prefix =
      absl::StrCat("/", v1::Federation::service_full_name(), "/");
  if (!absl::ConsumePrefix(&path, prefix)) return false;
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          v1::Federation::service_full_name());
  return service != nullptr &&
         service->FindMethodByName(std::string(path)) != nullptr;
}

class DecodeFailureInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit DecodeFailureInterceptor(grpc::experimental::ServerRpcInfo* info)
      : info_(info) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      // Synchronous methods say INTERNAL, callback methods (GetTask)
      // UNIMPLEMENTED, both with no message; every status of ours has one.
      if ((status.error_code() == grpc::StatusCode::INTERNAL ||
           status.error_code() == grpc::StatusCode::UNIMPLEMENTED) &&
          status.error_message().empty()) {
        methods->ModifySendStatus(Explained(status));
      }
    }
    methods->Proceed();
  }

 private:
  // A Federation method's empty refusal: its bytes did not decode. Any
  // other path is a method this server does not serve: UNIMPLEMENTED, as
  // gRPC answers, with what it does serve.
  grpc::Status Explained(const grpc::Status& status) const {
    const std::string method = info_->method() ? info_->method() : "?";
    if (!IsFederationMethod(method)) {
      return grpc::Status(
          grpc::StatusCode::UNIMPLEMENTED,
          absl::StrCat("no method ", base::Printable(method),
                       " here: this server serves fedberry.v1.Federation "
                       "and grpc.health.v1.Health"));
    }
    const std::string peer = base::Printable(
        info_->server_context() ? info_->server_context()->peer() : "");
    spdlog::warn("refused a {} call from {}: its message does not decode",
                 method, peer);
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("the request to ", method,
                     " does not decode as its fedberry.v1 message "
                     "(malformed bytes, or another protocol)"));
  }

  grpc::experimental::ServerRpcInfo* info_;
};

class Factory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new DecodeFailureInterceptor(info);
  }
};

}  // namespace

std::vector<
    std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
DecodeFailureInterceptors() {
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      out;
  out.push_back(std::make_unique<Factory>());
  return out;
}

}  // namespace fedberry::server
