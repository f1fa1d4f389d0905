#pragma once
// The few cryptographic primitives OAuth needs (PKCE, state values, token comparison), on OpenSSL.
#include <cstddef>
#include <string>
#include <string_view>

namespace fulfillsync::crypto {

std::string sha256(std::string_view data);                              // 32 raw bytes
std::string hmac_sha256(std::string_view key, std::string_view data);  // 32 raw bytes
std::string base64url(std::string_view bytes);                          // RFC 4648 §5, without padding
std::string random_bytes(std::size_t count);                            // from the system's CSPRNG; throws on failure
// A version-4-shaped UUID made from the first 16 bytes of `bytes`.
std::string uuid_from(std::string_view bytes);
// Comparison in time independent of where the strings differ (secrets, verifiers).
bool equal(std::string_view a, std::string_view b);

}  // namespace fulfillsync::crypto
