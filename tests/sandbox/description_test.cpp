// The API description (sandbox/openapi/fulfillment-api.yaml) stays true to the sandbox: it names
// exactly the operations the sandbox routes, from the same versions, and the sandbox serves it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <yaml-cpp/yaml.h>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"
#include "fulfillsync/testing/process.hpp"
#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

// "METHOD pattern" -> first version, with path parameters written "{}" as the route table does.
using Operations = std::map<std::string, std::string>;

std::string route_pattern(const std::string& openapi_path) {
  std::string out;
  for (std::size_t i = openapi_path.starts_with('/') ? 1 : 0; i < openapi_path.size(); ++i) {
    if (openapi_path[i] == '{') {
      out += "{}";
      i = openapi_path.find('}', i);
    } else {
      out.push_back(openapi_path[i]);
    }
  }
  return out;
}

Operations described() {
  Operations operations;
  const YAML::Node root = YAML::Load(std::string(sandbox::openapi_description()));
  for (const auto& path : root["paths"]) {
    for (const auto& operation : path.second) {
      std::string method = operation.first.as<std::string>();
      if (method == "parameters" || method == "summary" || method == "description") continue;
      for (auto& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const YAML::Node since = operation.second["x-since"];
      operations[method + " " + route_pattern(path.first.as<std::string>())] = since ? since.as<std::string>() : "(no x-since)";
    }
  }
  return operations;
}

Operations routed() {
  Operations operations;
  for (const auto& route : sandbox::routes()) {
    operations[std::string(route.method) + " " + std::string(route.pattern)] = std::string(sandbox::version_name(route.since));
  }
  return operations;
}

TEST(SandboxDescription, NamesExactlyTheRoutedOperationsWithTheirVersions) {
  const Operations in_description = described();
  const Operations in_sandbox = routed();
  for (const auto& [operation, since] : in_sandbox) {
    const auto found = in_description.find(operation);
    if (found == in_description.end()) {
      ADD_FAILURE() << "the sandbox routes " << operation << " (since " << since << ") but the description lacks it";
    } else {
      EXPECT_EQ(found->second, since) << operation << ": x-since differs from the version the sandbox routes it from";
    }
  }
  for (const auto& [operation, since] : in_description) {
    if (!in_sandbox.contains(operation)) ADD_FAILURE() << "the description names " << operation << " but the sandbox does not route it";
  }
  EXPECT_EQ(in_description.size(), in_sandbox.size());
}

TEST(SandboxDescription, IsServedWithoutATokenAndMatchesTheSourceFile) {
  std::ifstream file(testing::source_path("sandbox/openapi/fulfillment-api.yaml"));
  std::stringstream source;
  source << file.rdbuf();
  ASSERT_FALSE(source.str().empty());
  EXPECT_EQ(std::string(sandbox::openapi_description()), source.str()) << "rebuild: the compiled-in copy is stale";

  Sandbox sandbox({"--faults", "500=1"});  // the description is never faulted
  const auto served = sandbox.raw("GET", "/openapi.yaml");
  ASSERT_EQ(served.status, 200) << served.body;
  EXPECT_EQ(served.body, source.str());
  EXPECT_EQ(sandbox.raw("POST", "/openapi.yaml").status, 405);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
