// Authenticated, encrypted transport of Shamir shares between two boards
// through the server, which relays the boxes but must not read them.
// ChaCha20-Poly1305 (RFC 8439) under the pair's share-transport key
// (key_agreement.h, KeyPurpose::kShareTransport); the associated data binds
// the box to its session, round, sender and receiver, so the server cannot
// hand a box to another receiver, pass it off as another sender's, or replay
// it into another round: Open fails on any of these as on any altered byte.
//
// The nonce is 12 random bytes, sent at the head of the box. The pair's key
// is the same in both directions (either side derives it), so a fixed nonce
// would encrypt the two directions' boxes under one key and nonce; random
// nonces make that a 2^-96 event per pair of boxes.
//
// Box layout: nonce (12) | ciphertext (as long as the plaintext) | tag (16).
// Thread-safety: functions without shared state.
#ifndef FEDBERRY_SECAGG_SHARE_BOX_H_
#define FEDBERRY_SECAGG_SHARE_BOX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "secagg/key_agreement.h"
#include "secagg/random_source.h"

namespace fedberry::secagg {

inline constexpr size_t kShareBoxNonceBytes = 12;
inline constexpr size_t kShareBoxTagBytes = 16;
inline constexpr size_t kMaxShareBoxPlaintext = size_t{1} << 20;

// Who sends a box to whom, in which session and round: the associated data.
struct BoxAddress {
  std::string session;  // the session's id (at most 1024 bytes)
  uint64_t round = 0;
  uint32_t sender = 0;  // the boards' ids within the session
  uint32_t receiver = 0;
};

// The box of `plaintext` (at most kMaxShareBoxPlaintext bytes) for
// `address`. InvalidArgument for an oversized plaintext or session id;
// Internal when `random` or OpenSSL fails.
absl::StatusOr<std::vector<uint8_t>> SealShareBox(
    const Key256& key, const BoxAddress& address,
    absl::Span<const uint8_t> plaintext, RandomSource& random);

// The plaintext of `box`. InvalidArgument when it is too short to be a box
// or the session id is oversized; DataLoss when it fails authentication:
// altered, sealed under another key, or for another address (session,
// round, sender or receiver). Internal when OpenSSL fails.
absl::StatusOr<std::vector<uint8_t>> OpenShareBox(
    const Key256& key, const BoxAddress& address,
    absl::Span<const uint8_t> box);

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_SHARE_BOX_H_
