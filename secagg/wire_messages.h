// The SecAgg+ messages (session_messages.h) as they travel in fedberry.v1's
// SecAggStep calls, and back. Everything read from the wire is checked for
// shape here (key and seed lengths, bounded sizes); the sessions check the
// rest (who sent it, in which stage, whether it authenticates).
// Thread-safety: pure functions.
#ifndef FEDBERRY_SECAGG_WIRE_MESSAGES_H_
#define FEDBERRY_SECAGG_WIRE_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "fedberry/v1/federation.pb.h"
#include "secagg/session_messages.h"

namespace fedberry::secagg {

// What a board is told of its session, and how it weighs and clips.
struct BoardTaskSettings {
  SessionConfig config;
  uint32_t board = 0;
  double clip = 0;
  uint64_t weight_cap = 0;
  // Differential privacy: the board weighs 1 and sends whether its clip to
  // the round's L2 bound shortened its update (UpdateWords' count_clipped).
  bool count_clipped = false;
};

v1::SecAggTask ToProto(const BoardTaskSettings& settings);
// InvalidArgument naming the field out of range (CheckSessionConfig, a
// seed that is not 32 bytes, a board outside the cohort, a clip that is
// not finite and positive, no weight cap).
absl::StatusOr<BoardTaskSettings> FromProto(const v1::SecAggTask& task);

v1::SecAggKeys ToProto(const KeyAdvertisement& ad);
// InvalidArgument for keys that are not 32 bytes, a signature over
// kMaxSignatureBytes or a certificate over kMaxCertificateBytes (the
// certificate itself is the caller's to check).
absl::StatusOr<KeyAdvertisement> FromProto(const v1::SecAggKeys& keys);

v1::SecAggShareBox ToProto(const ShareCiphertext& box);
// InvalidArgument for a box over kMaxShareBoxBytes.
absl::StatusOr<ShareCiphertext> FromProto(const v1::SecAggShareBox& box);

v1::SecAggShare ToProto(const UnmaskShare& share);
// InvalidArgument for more than kMaxShareValues values.
absl::StatusOr<UnmaskShare> FromProto(const v1::SecAggShare& share);

// Bounds on what one message may carry, far above what a session makes.
inline constexpr size_t kMaxSignatureBytes = 1024;
inline constexpr size_t kMaxShareBoxBytes = 4096;
inline constexpr size_t kMaxShareValues = 64;
inline constexpr size_t kMaxCertificateBytes = 16384;

// `words` as little-endian bytes, four a word: what the gateway's digest of
// an unmasked sum hashes, and how a test instrument keeps a board's words.
std::string WordBytes(absl::Span<const uint32_t> words);

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_WIRE_MESSAGES_H_
