#pragma once
// Recorded bodies under tests/api/models/bodies/<version>/, and the versions the tests run over.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::api {
// GoogleTest prints parameters through this (found by argument-dependent lookup).
inline void PrintTo(ApiVersion version, std::ostream* out) { *out << to_string(version); }
}  // namespace fulfillsync::api

namespace fulfillsync::api::testing_bodies {

inline std::string recorded_body(ApiVersion version, std::string_view name) {
  // fmt::format, not operator+: GCC 12 at -O3 misreads a literal before a temporary string (bug 105651).
  return fulfillsync::testing::read_file(
      fulfillsync::testing::source_path(fmt::format("tests/api/models/bodies/{}/{}", to_string(version), name)));
}

inline constexpr ApiVersion kAllVersions[] = {ApiVersion::v2025_07, ApiVersion::v2026_01, ApiVersion::v2026_07};

struct VersionName {
  std::string operator()(const ::testing::TestParamInfo<ApiVersion>& info) const {
    std::string name(to_string(info.param));
    name[4] = '_';
    return "v" + name;
  }
};

}  // namespace fulfillsync::api::testing_bodies
