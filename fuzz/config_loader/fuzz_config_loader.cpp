// libFuzzer target for the configuration loader: every input is a YAML document handed to
// load_string(). A ConfigError is the expected answer to a bad document and must list at least one
// problem; any other exception, a crash or a sanitizer report is a bug.
//
// The loader checks that secret files exist with mode 0600. The target writes such files once into
// a temporary directory named by $CREDENTIALS_DIRECTORY, so that the seeds reference them the way
// config/fulfillsync.example.yaml does (`token_file: ${CREDENTIALS_DIRECTORY}/api-token`), plus one
// readable by others to reach the mode check.
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "fulfillsync/config/loader.hpp"

namespace {

namespace fs = std::filesystem;

void write_secret(const fs::path& file, fs::perms mode) {
  std::ofstream(file) << "fuzz-secret\n";
  fs::permissions(file, mode);
}

// Called once per process; the directory is removed at exit.
bool make_credentials_directory() {
  static const fs::path dir = [] {
    std::string pattern = (fs::temp_directory_path() / "fulfillsync-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    return fs::path(pattern);
  }();
  write_secret(dir / "api-token", fs::perms::owner_read | fs::perms::owner_write);
  write_secret(dir / "oauth-client-secret", fs::perms::owner_read);
  write_secret(dir / "shared-token", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                         fs::perms::others_read);
  ::setenv("CREDENTIALS_DIRECTORY", dir.c_str(), 1);
  std::atexit([] { fs::remove_all(dir); });
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool ready = make_credentials_directory();
  (void)ready;
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  try {
    (void)fulfillsync::config::load_string(yaml, "fuzz.yaml");
  } catch (const fulfillsync::config::ConfigError& error) {
    if (error.diagnostics().empty()) std::abort();  // a refusal must say why
  }
  return 0;
}
