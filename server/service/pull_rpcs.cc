// The service's server streams of the job's models: PullModelFile (the
// plan's TorchScript file, once per board) and PullModel (the model of a
// task, encoded once per model and encoding for all its pulls). Both wait
// their turn among --max_streams (OutgoingStream::StartInTurn).
// Thread-safety: see federation_service.h.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "proto/wire.h"
#include "runtime/tensor_codec.h"
#include "server/outgoing_stream.h"
#include "server/service/call_helpers.h"
#include "server/service/federation_service.h"

namespace fedberry::server {

grpc::ServerWriteReactor<v1::ModelFileChunk>* FederationService::PullModelFile(
    grpc::CallbackServerContext* context,
    const v1::PullModelFileRequest* request) {
  using Stream = OutgoingStream<v1::ModelFileChunk>;
  std::string caller;
  if (grpc::Status ok = Authorize(context, "PullModelFile", "", &caller);
      !ok.ok()) {
    return Stream::Refused(ok);
  }
  if (!plan_.model_file ||
      request->model_sha256() != plan_.plan.model_sha256()) {
    return Stream::Refused(wire::ToGrpcStatus(absl::NotFoundError(
        absl::StrCat("this job has no model file with SHA-256 ",
                     base::Printable(request->model_sha256(), 64)))));
  }
  size_t offset = 0;
  auto next = [file = plan_.model_file,
               offset](v1::ModelFileChunk& chunk) mutable {
    if (offset >= file->size()) return false;
    chunk.set_total_bytes(file->size());
    chunk.set_offset(offset);
    chunk.set_data(file->data() + offset,
                   std::min<size_t>(wire::kChunkBytes, file->size() - offset));
    offset += wire::kChunkBytes;
    return true;
  };
  return Stream::StartInTurn(
      std::move(next), streams_, context, "PullModelFile",
      StreamName("the model file stream", caller), caller);
}

grpc::ServerWriteReactor<v1::ModelChunk>* FederationService::PullModel(
    grpc::CallbackServerContext* context, const v1::PullModelRequest* request) {
  using Stream = OutgoingStream<v1::ModelChunk>;
  std::string caller;
  if (grpc::Status ok =
          Authorize(context, "PullModel", request->client_id(), &caller);
      !ok.ok()) {
    return Stream::Refused(ok);
  }
  auto model = coordinator_.ModelFor(*request);
  if (!model.ok()) return Stream::Refused(wire::ToGrpcStatus(model.status()));
  // One encoding of the model for all its pulls (RAW tensors are the global
  // model's, not copies).
  auto tensors =
      encoded_models_.Get(*model, coordinator_.options().model_encoding);
  if (!tensors.ok()) {
    return Stream::Refused(wire::ToGrpcStatus(tensors.status()));
  }
  struct Source {
    std::shared_ptr<const EncodedModelCache::Encoded> tensors;
    std::optional<runtime::ModelChunker> chunker;
  };
  auto source = std::make_shared<Source>();
  source->tensors = *std::move(tensors);
  source->chunker.emplace(*source->tensors, request->round(),
                          request->task_id(), wire::kChunkBytes);
  return Stream::StartInTurn(
      [source](v1::ModelChunk& chunk) { return source->chunker->Next(chunk); },
      streams_, context, "the model stream",
      StreamName("the model stream", caller), caller);
}

}  // namespace fedberry::server
