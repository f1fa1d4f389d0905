#include "fulfillsync/common/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <stdexcept>

namespace fulfillsync::crypto {
namespace {
const unsigned char* bytes_of(std::string_view data) { return reinterpret_cast<const unsigned char*>(data.data()); }
}  // namespace

std::string sha256(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(bytes_of(data), data.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), bytes_of(data), data.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string base64url(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto at = [&](std::size_t n) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[n])); };
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned triple = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out.push_back(kAlphabet[(triple >> 18) & 63]);
    out.push_back(kAlphabet[(triple >> 12) & 63]);
    out.push_back(kAlphabet[(triple >> 6) & 63]);
    out.push_back(kAlphabet[triple & 63]);
  }
  if (i + 1 == bytes.size()) {
    const unsigned single = at(i) << 16;
    out.push_back(kAlphabet[(single >> 18) & 63]);
    out.push_back(kAlphabet[(single >> 12) & 63]);
  } else if (i + 2 == bytes.size()) {
    const unsigned pair = (at(i) << 16) | (at(i + 1) << 8);
    out.push_back(kAlphabet[(pair >> 18) & 63]);
    out.push_back(kAlphabet[(pair >> 12) & 63]);
    out.push_back(kAlphabet[(pair >> 6) & 63]);
  }
  return out;
}

std::string random_bytes(std::size_t count) {
  std::string out(count, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(count)) != 1) {
    throw std::runtime_error("RAND_bytes failed");
  }
  return out;
}

std::string uuid_from(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < 16 && i < bytes.size(); ++i) {
    auto byte = static_cast<unsigned char>(bytes[i]);
    if (i == 6) byte = static_cast<unsigned char>((byte & 0x0F) | 0x40);
    if (i == 8) byte = static_cast<unsigned char>((byte & 0x3F) | 0x80);
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xF]);
  }
  return out;
}

bool equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace fulfillsync::crypto
