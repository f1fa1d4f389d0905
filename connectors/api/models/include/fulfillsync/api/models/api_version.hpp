#pragma once
// The API versions the client speaks; the version is the first path segment (`/2026-01/order`).
#include <optional>
#include <string_view>

namespace fulfillsync::api {

enum class ApiVersion { v2025_07, v2026_01, v2026_07 };

constexpr std::string_view to_string(ApiVersion version) {
  switch (version) {
    case ApiVersion::v2025_07:
      return "2025-07";
    case ApiVersion::v2026_01:
      return "2026-01";
    case ApiVersion::v2026_07:
      return "2026-07";
  }
  return "2026-07";
}

constexpr std::optional<ApiVersion> parse_api_version(std::string_view text) {
  if (text == "2025-07") return ApiVersion::v2025_07;
  if (text == "2026-01") return ApiVersion::v2026_01;
  if (text == "2026-07") return ApiVersion::v2026_07;
  return std::nullopt;
}

// Versions are year-months, so declaration order is chronological.
constexpr bool at_least(ApiVersion version, ApiVersion since) { return version >= since; }

}  // namespace fulfillsync::api
