#include "secagg/share_box.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <climits>

#include "absl/strings/str_format.h"
#include "crypto/openssl_errors.h"
#include "crypto/openssl_owners.h"

namespace fedberry::secagg {
namespace {

using crypto::OpenSslError;

constexpr size_t kMaxSessionBytes = 1024;

void AppendLittleEndian(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
}

// A versioned tag, then each field at a fixed width (the session length
// first), so no two addresses share an encoding.
absl::StatusOr<std::vector<uint8_t>> AssociatedData(const BoxAddress& a) {
  if (a.session.size() > kMaxSessionBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("share box session id of %d bytes; at most %d",
                        a.session.size(), kMaxSessionBytes));
  }
  constexpr absl::string_view kTag = "fedberry secagg v1 share box";
  std::vector<uint8_t> ad(kTag.begin(), kTag.end());
  AppendLittleEndian(ad, a.session.size(), 4);
  ad.insert(ad.end(), a.session.begin(), a.session.end());
  AppendLittleEndian(ad, a.round, 8);
  AppendLittleEndian(ad, a.sender, 4);
  AppendLittleEndian(ad, a.receiver, 4);
  return ad;
}

std::string Describe(const BoxAddress& a) {
  return absl::StrFormat(
      "from board %d to board %d (session %d bytes, round %d)", a.sender,
      a.receiver, a.session.size(), a.round);
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> SealShareBox(
    const Key256& key, const BoxAddress& address,
    absl::Span<const uint8_t> plaintext, RandomSource& random) {
  if (plaintext.size() > kMaxShareBoxPlaintext) {
    return absl::InvalidArgumentError(
        absl::StrFormat("share box plaintext of %d bytes; at most %d",
                        plaintext.size(), kMaxShareBoxPlaintext));
  }
  absl::StatusOr<std::vector<uint8_t>> ad = AssociatedData(address);
  if (!ad.ok()) return ad.status();
  std::vector<uint8_t> box(kShareBoxNonceBytes + plaintext.size() +
                           kShareBoxTagBytes);
  if (absl::Status s =
          random.Fill(absl::MakeSpan(box.data(), kShareBoxNonceBytes));
      !s.ok()) {
    return s;
  }
  crypto::CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  int out = 0;
  int final_out = 0;
  if (ctx == nullptr ||
      EVP_EncryptInit_ex(ctx.get(), EVP_chacha20_poly1305(), nullptr,
                         key.data(), box.data()) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &out, ad->data(),
                        static_cast<int>(ad->size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), box.data() + kShareBoxNonceBytes, &out,
                        plaintext.data(),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), box.data() + kShareBoxNonceBytes + out,
                          &final_out) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, kShareBoxTagBytes,
                          box.data() + box.size() - kShareBoxTagBytes) != 1) {
    return OpenSslError("share box not sealed");
  }
  return box;
}

absl::StatusOr<std::vector<uint8_t>> OpenShareBox(
    const Key256& key, const BoxAddress& address,
    absl::Span<const uint8_t> box) {
  if (box.size() < kShareBoxNonceBytes + kShareBoxTagBytes ||
      box.size() >
          kShareBoxNonceBytes + kMaxShareBoxPlaintext + kShareBoxTagBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a share box %s of %d bytes: not %d..%d", Describe(address), box.size(),
        kShareBoxNonceBytes + kShareBoxTagBytes,
        kShareBoxNonceBytes + kMaxShareBoxPlaintext + kShareBoxTagBytes));
  }
  absl::StatusOr<std::vector<uint8_t>> ad = AssociatedData(address);
  if (!ad.ok()) return ad.status();
  const size_t size = box.size() - kShareBoxNonceBytes - kShareBoxTagBytes;
  std::vector<uint8_t> plaintext(size);
  // The tag is only read; OpenSSL's ctrl takes a non-const pointer.
  uint8_t tag[kShareBoxTagBytes];
  std::copy_n(box.end() - kShareBoxTagBytes, kShareBoxTagBytes, tag);
  crypto::CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  int out = 0;
  if (ctx == nullptr ||
      EVP_DecryptInit_ex(ctx.get(), EVP_chacha20_poly1305(), nullptr,
                         key.data(), box.data()) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, kShareBoxTagBytes,
                          tag) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &out, ad->data(),
                        static_cast<int>(ad->size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), plaintext.data(), &out,
                        box.data() + kShareBoxNonceBytes,
                        static_cast<int>(size)) != 1) {
    return OpenSslError("share box not opened");
  }
  int final_out = 0;
  if (EVP_DecryptFinal_ex(ctx.get(), plaintext.data() + out, &final_out) != 1) {
    crypto::DrainErrors();
    // Nothing of an unauthenticated plaintext may be used or kept.
    OPENSSL_cleanse(plaintext.data(), plaintext.size());
    return absl::DataLossError(absl::StrFormat(
        "share box %s failed authentication: altered, sealed under another "
        "key, or meant for another session, round, sender or receiver",
        Describe(address)));
  }
  return plaintext;
}

}  // namespace fedberry::secagg
