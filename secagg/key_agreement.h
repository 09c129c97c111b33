// X25519 key agreement and the keys secure aggregation derives from it.
// Each pair of boards in a session agrees on a 32-byte shared secret
// (either side computes the same one from its private key and the other's
// public key); HKDF-SHA256 turns it into keys for one purpose each: the
// key of the share boxes the pair exchanges, and the seed of the pair's
// mask. The labels differ, so knowing one derived key tells nothing about
// the other; the session text goes into HKDF's info too, so a pair's keys
// differ from session to session even if their key pairs were reused.
//
// SecAgg+ still gives each board two key pairs (one for transport, one for
// masks): the mask key's private half is Shamir-shared and reconstructed
// when a board drops, and that must not open its share boxes.
//
// A peer's public key that is a low-order point would make the shared
// secret all zero whatever our private key: such keys are refused.
// Thread-safety: functions without shared state.
#ifndef FEDBERRY_SECAGG_KEY_AGREEMENT_H_
#define FEDBERRY_SECAGG_KEY_AGREEMENT_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "secagg/random_source.h"

namespace fedberry::secagg {

inline constexpr size_t kX25519KeyBytes = 32;
using X25519Key = std::array<uint8_t, kX25519KeyBytes>;
// A 256-bit symmetric key: a shared secret, a box key, a mask seed.
using Key256 = std::array<uint8_t, 32>;

struct KeyPair {
  X25519Key private_key{};
  X25519Key public_key{};
};

// A fresh key pair: 32 bytes from `random` as the private key (X25519
// clamps them). Internal when `random` or OpenSSL fails.
absl::StatusOr<KeyPair> GenerateKeyPair(RandomSource& random);

// The key pair of a known private key: one restored from a checkpoint, or
// a dropped board's, reconstructed from Shamir shares. Internal when
// OpenSSL fails.
absl::StatusOr<KeyPair> KeyPairFromPrivate(const X25519Key& private_key);

// X25519(own_private, peer_public). InvalidArgument when the result would
// be all zero (the peer's key is a low-order point); Internal when OpenSSL
// fails otherwise.
absl::StatusOr<Key256> Agree(const X25519Key& own_private,
                             const X25519Key& peer_public);

enum class KeyPurpose {
  kShareTransport,  // the ChaCha20-Poly1305 key of the pair's share boxes
  kMaskSeed,        // the ChaCha20 key of the pair's mask stream
};

// HKDF-SHA256 (no salt) of the shared secret with info = the purpose's
// label, a zero byte, then `session` (which names the session and round).
// Internal when OpenSSL fails.
absl::StatusOr<Key256> DeriveKey(const Key256& shared_secret,
                                 KeyPurpose purpose, absl::string_view session);

// RFC 5869 HKDF with SHA-256 and an empty salt: `size` bytes (1..8160).
// DeriveKey's building block, public for its known-answer test.
absl::StatusOr<std::vector<uint8_t>> HkdfSha256(absl::Span<const uint8_t> ikm,
                                                absl::Span<const uint8_t> info,
                                                size_t size);

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_KEY_AGREEMENT_H_
