// Signatures with the fleet's keys: a board signs bytes with its private
// key (the one its fleet certificate certifies), and anyone holding the
// certificate checks them. ECDSA with SHA-256 for the fleet's P-256 keys
// (fedberry-pki issues those), RSA with SHA-256, Ed25519 as itself.
// Thread-safety: pure functions.
#ifndef FEDBERRY_PKI_SIGNATURES_H_
#define FEDBERRY_PKI_SIGNATURES_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedberry::pki {

// `bytes` signed with the PEM private key. InvalidArgument when the key
// does not parse; Internal when OpenSSL cannot sign.
absl::StatusOr<std::string> SignWithKey(const std::string& key_pem,
                                        absl::string_view bytes);

// OK when `signature` over `bytes` verifies with the public key of the
// first certificate of `cert_pem`; PermissionDenied when it does not;
// InvalidArgument when the certificate does not parse.
absl::Status VerifySignature(const std::string& cert_pem,
                             absl::string_view bytes,
                             absl::string_view signature);

}  // namespace fedberry::pki

#endif  // FEDBERRY_PKI_SIGNATURES_H_
