#include "secagg/shamir.h"

#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_format.h"

namespace fedberry::secagg {
namespace {

constexpr uint64_t kP = kShamirPrime;

uint64_t Add(uint64_t a, uint64_t b) {
  const uint64_t s = a + b;  // < 2^62, no overflow
  return s >= kP ? s - kP : s;
}

uint64_t Sub(uint64_t a, uint64_t b) { return a >= b ? a - b : a + kP - b; }

// 2^61 = 1 (mod p), so the 122-bit product folds as low 61 bits + the rest.
uint64_t Mul(uint64_t a, uint64_t b) {
  const unsigned __int128 z = static_cast<unsigned __int128>(a) * b;
  uint64_t s = (static_cast<uint64_t>(z) & kP) + static_cast<uint64_t>(z >> 61);
  s = (s & kP) + (s >> 61);
  return s >= kP ? s - kP : s;
}

// a^(p-2) (Fermat); a != 0.
uint64_t Inverse(uint64_t a) {
  uint64_t result = 1;
  uint64_t base = a;
  for (uint64_t e = kP - 2; e != 0; e >>= 1) {
    if (e & 1) result = Mul(result, base);
    base = Mul(base, base);
  }
  return result;
}

size_t ChunkCount(size_t secret_size) {
  return (secret_size + kShamirChunkBytes - 1) / kShamirChunkBytes;
}

// Uniform in [0, p): 61 random bits, redrawn in the one case (2^61 - 1 = p)
// that falls outside. A source that keeps giving that value is broken.
absl::StatusOr<uint64_t> RandomElement(RandomSource& random) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    uint8_t bytes[8];
    if (absl::Status s = random.Fill(absl::MakeSpan(bytes)); !s.ok()) {
      return s;
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | bytes[i];
    v &= kP;
    if (v < kP) return v;
  }
  return absl::InternalError(
      "the random source gave 64 values outside the field in a row");
}

// The Lagrange coefficients that evaluate, at `z`, the polynomial through
// the points xs: f(z) = sum_i coefficient_i * f(xs[i]).
std::vector<uint64_t> LagrangeAt(absl::Span<const uint64_t> xs, uint64_t z) {
  std::vector<uint64_t> coefficients(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    uint64_t numerator = 1;
    uint64_t denominator = 1;
    for (size_t j = 0; j < xs.size(); ++j) {
      if (j == i) continue;
      numerator = Mul(numerator, Sub(z, xs[j]));
      denominator = Mul(denominator, Sub(xs[i], xs[j]));
    }
    coefficients[i] = Mul(numerator, Inverse(denominator));
  }
  return coefficients;
}

uint64_t Combine(absl::Span<const uint64_t> coefficients,
                 absl::Span<const Share> shares, size_t chunk) {
  uint64_t sum = 0;
  for (size_t i = 0; i < coefficients.size(); ++i) {
    sum = Add(sum, Mul(coefficients[i], shares[i].values[chunk]));
  }
  return sum;
}

absl::Status CheckShares(absl::Span<const Share> shares, int threshold) {
  if (threshold < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Shamir threshold %d is below 1", threshold));
  }
  if (shares.size() < static_cast<size_t>(threshold)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d Shamir shares given; reconstructing needs the threshold, %d",
        shares.size(), threshold));
  }
  const uint32_t secret_size = shares[0].secret_size;
  if (secret_size == 0 || secret_size > kMaxShamirSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Shamir share's secret size %d is outside 1..%d",
                        secret_size, kMaxShamirSecretBytes));
  }
  const size_t chunks = ChunkCount(secret_size);
  std::unordered_set<uint32_t> seen;
  for (const Share& share : shares) {
    if (share.index == 0 || share.index > kMaxShamirShares) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Shamir share index %d is outside 1..%d (index 0 would be the "
          "secret itself)",
          share.index, kMaxShamirShares));
    }
    if (!seen.insert(share.index).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "two Shamir shares have index %d: duplicates add nothing and may "
          "be a replay",
          share.index));
    }
    if (share.secret_size != secret_size || share.values.size() != chunks) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Shamir share %d is of a %d-byte secret with %d values; share %d "
          "is of a %d-byte secret (%d values)",
          share.index, share.secret_size, share.values.size(), shares[0].index,
          secret_size, chunks));
    }
    for (uint64_t v : share.values) {
      if (v >= kP) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "Shamir share %d holds %d, outside the field (below 2^61 - 1)",
            share.index, v));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Share>> Split(absl::Span<const uint8_t> secret,
                                         int threshold, int n,
                                         RandomSource& random) {
  if (secret.empty() || secret.size() > kMaxShamirSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a Shamir secret of %d bytes; 1..%d are shared",
                        secret.size(), kMaxShamirSecretBytes));
  }
  if (n < 1 || n > kMaxShamirShares || threshold < 1 || threshold > n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Shamir threshold %d of %d shares; needs 1 <= threshold <= shares "
        "<= %d",
        threshold, n, kMaxShamirShares));
  }
  const size_t chunks = ChunkCount(secret.size());
  std::vector<Share> shares(n);
  for (int i = 0; i < n; ++i) {
    shares[i].index = static_cast<uint32_t>(i + 1);
    shares[i].secret_size = static_cast<uint32_t>(secret.size());
    shares[i].values.resize(chunks);
  }
  // f(x) = chunk + c_1 x + ... + c_{t-1} x^{t-1}, coefficients uniform.
  std::vector<uint64_t> coefficients(threshold);
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    uint64_t value = 0;
    const size_t begin = chunk * kShamirChunkBytes;
    const size_t end = std::min(begin + kShamirChunkBytes, secret.size());
    for (size_t b = end; b > begin; --b) value = (value << 8) | secret[b - 1];
    coefficients[0] = value;
    for (int k = 1; k < threshold; ++k) {
      absl::StatusOr<uint64_t> c = RandomElement(random);
      if (!c.ok()) return c.status();
      coefficients[k] = *c;
    }
    for (Share& share : shares) {
      uint64_t y = 0;  // Horner
      for (int k = threshold - 1; k >= 0; --k) {
        y = Add(Mul(y, share.index), coefficients[k]);
      }
      share.values[chunk] = y;
    }
  }
  std::fill(coefficients.begin(), coefficients.end(), 0);
  return shares;
}

absl::StatusOr<std::vector<uint8_t>> Reconstruct(absl::Span<const Share> shares,
                                                 int threshold) {
  if (absl::Status s = CheckShares(shares, threshold); !s.ok()) return s;
  const uint32_t secret_size = shares[0].secret_size;
  const size_t chunks = shares[0].values.size();
  const absl::Span<const Share> basis = shares.subspan(0, threshold);
  std::vector<uint64_t> xs;
  xs.reserve(basis.size());
  for (const Share& share : basis) xs.push_back(share.index);

  // Every share past the threshold must lie on the basis's polynomials.
  for (const Share& extra : shares.subspan(threshold)) {
    const std::vector<uint64_t> at_extra = LagrangeAt(xs, extra.index);
    for (size_t chunk = 0; chunk < chunks; ++chunk) {
      if (Combine(at_extra, basis, chunk) != extra.values[chunk]) {
        return absl::DataLossError(absl::StrFormat(
            "Shamir share %d disagrees with the first %d shares: some share "
            "is corrupt or belongs to another secret",
            extra.index, threshold));
      }
    }
  }

  const std::vector<uint64_t> at_zero = LagrangeAt(xs, 0);
  std::vector<uint8_t> secret(secret_size);
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    uint64_t value = Combine(at_zero, basis, chunk);
    const size_t begin = chunk * kShamirChunkBytes;
    const size_t end = std::min<size_t>(begin + kShamirChunkBytes, secret_size);
    for (size_t b = begin; b < end; ++b) {
      secret[b] = static_cast<uint8_t>(value);
      value >>= 8;
    }
    if (value != 0) {  // bits above the chunk's bytes: never from Split
      return absl::DataLossError(absl::StrFormat(
          "the %d Shamir shares reconstruct a value out of range in chunk %d: "
          "some share is corrupt or belongs to another secret",
          threshold, chunk));
    }
  }
  return secret;
}

}  // namespace fedberry::secagg
