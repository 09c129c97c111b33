#include "server/decode_failure_interceptor.h"

#include <spdlog/spdlog.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/log_text.h"

namespace fedberry::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

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
        const std::string method = info_->method() ? info_->method() : "?";
        const std::string peer = runtime::Printable(
            info_->server_context() ? info_->server_context()->peer() : "");
        spdlog::warn("refused a {} call from {}: its message does not decode",
                     method, peer);
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("the request to ", method,
                         " does not decode as its fedberry.v1 message "
                         "(malformed bytes, or another protocol)")));
      }
    }
    methods->Proceed();
  }

 private:
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
