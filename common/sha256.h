// SHA-256 of a byte range, as lowercase hex (OpenSSL's implementation): the
// fingerprint of a run's final weights.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace distlab {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::span<const std::byte> bytes);
  std::string hex_digest();  // ends the hash

 private:
  void* context_;  // EVP_MD_CTX, kept out of this header
};

std::string sha256_hex(std::span<const std::byte> bytes);

}  // namespace distlab
