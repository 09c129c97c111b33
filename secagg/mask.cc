#include "secagg/mask.h"

#include <openssl/evp.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "crypto/openssl_errors.h"
#include "crypto/openssl_owners.h"

namespace fedberry::secagg {
namespace {

absl::Status CheckBits(int bits) {
  if (bits < 1 || bits > 32) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mask of %d bits; 1..32 are possible", bits));
  }
  return absl::OkStatus();
}

uint32_t BitsMask(int bits) {
  return bits == 32 ? ~uint32_t{0} : (uint32_t{1} << bits) - 1;
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> ExpandMask(const Key256& seed,
                                                 uint64_t count, int bits) {
  if (absl::Status s = CheckBits(bits); !s.ok()) return s;
  if (count > kMaxMaskWords) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mask of %d words; at most %d", count, kMaxMaskWords));
  }
  // EVP_chacha20's 16-byte IV: the 32-bit block counter (little-endian),
  // then the 96-bit nonce; all zero.
  const uint8_t iv[16] = {};
  crypto::CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr || EVP_EncryptInit_ex(ctx.get(), EVP_chacha20(), nullptr,
                                           seed.data(), iv) != 1) {
    return crypto::OpenSslError("mask stream not started");
  }
  std::vector<uint32_t> words(count);
  // The keystream is ChaCha20's encryption of zeros, made a piece at a time.
  constexpr size_t kPieceWords = 4096;
  uint8_t zeros[kPieceWords * 4] = {};
  uint8_t stream[kPieceWords * 4];
  const uint32_t keep = BitsMask(bits);
  for (uint64_t done = 0; done < count;) {
    const size_t n =
        static_cast<size_t>(std::min<uint64_t>(kPieceWords, count - done));
    int out = 0;
    if (EVP_EncryptUpdate(ctx.get(), stream, &out, zeros,
                          static_cast<int>(n * 4)) != 1 ||
        out != static_cast<int>(n * 4)) {
      return crypto::OpenSslError("mask stream failed");
    }
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* b = stream + 4 * i;
      words[done + i] = (uint32_t{b[0]} | uint32_t{b[1]} << 8 |
                         uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24) &
                        keep;
    }
    done += n;
  }
  return words;
}

absl::Status ApplyMask(absl::Span<uint32_t> values, const Key256& seed,
                       int bits, MaskSign sign) {
  if (absl::Status s = CheckBits(bits); !s.ok()) return s;
  const uint32_t keep = BitsMask(bits);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > keep) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "value %d at %d is not below 2^%d: it cannot be masked in that "
          "field",
          values[i], i, bits));
    }
  }
  absl::StatusOr<std::vector<uint32_t>> mask =
      ExpandMask(seed, values.size(), bits);
  if (!mask.ok()) return mask.status();
  // uint32_t arithmetic wraps mod 2^32; 2^bits divides it, so masking the
  // result keeps it mod 2^bits.
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = (sign == MaskSign::kAdd ? values[i] + (*mask)[i]
                                        : values[i] - (*mask)[i]) &
                keep;
  }
  return absl::OkStatus();
}

}  // namespace fedberry::secagg
