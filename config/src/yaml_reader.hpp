#pragma once
// Typed, located reading of YAML mappings: every problem becomes a Diagnostic with its file, line,
// column and key path, and reading goes on so that one run reports them all.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "fulfillsync/config/loader.hpp"

namespace fulfillsync::config::detail {

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  void error(const YAML::Mark& mark, std::string key_path, std::string message);
  bool empty() const { return list_.empty(); }
  // The problems in the order of the file (those with no place first), as an editor walks them.
  std::vector<Diagnostic> take();

 private:
  std::string file_;
  std::vector<Diagnostic> list_;
};

// A quoted scalar that does not close on the line it opens on: where its quote is, and whether it
// closes at all. yaml-cpp reads such a quote on to the next quote character in the file and reports
// where it then gave up (or nothing, at the end of the file), far from the mistake.
struct OpenQuote {
  YAML::Mark mark;  // of the opening quote, 0-based like yaml-cpp's
  bool closed_later = false;
};
std::optional<OpenQuote> first_open_quote(std::string_view text);

enum class Need { optional, required };

// A YAML mapping read key by key. Keys nobody asked for are reported as unknown when the section
// closes (destructor or close()), with a suggestion when one is close to a known key.
class Section {
 public:
  // Turns a YAML value into T, or says why it cannot.
  template <typename T>
  using Parse = std::function<std::optional<T>(const YAML::Node& value, std::string& why)>;

  // `report_missing` false: required keys that are absent go unreported (the section itself was
  // reported missing, and one error says it).
  Section(const YAML::Node& node, std::string path, const YAML::Mark& fallback_mark, Diagnostics& diagnostics,
          bool report_missing = true);
  ~Section() { close(); }
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;

  // The nested mapping under `key`; when absent, an empty section whose required keys report themselves.
  Section section(std::string_view key, Need need = Need::optional);

  bool has(std::string_view key) const;

  // Reads the value under `key` into `out` when present (`out` keeps its default otherwise).
  template <typename T, typename U>
  void read(std::string_view key, T& out, Need need, const Parse<U>& parse) {
    if (std::optional<U> parsed = parse_value(key, need, parse)) out = static_cast<T>(std::move(*parsed));
  }

  template <typename T, typename U>
  void read(std::string_view key, std::optional<T>& out, Need need, const Parse<U>& parse) {
    if (std::optional<U> parsed = parse_value(key, need, parse)) out = static_cast<T>(std::move(*parsed));
  }

  // Reports a problem with the value under `key` found by a check beyond its type and range.
  void reject(std::string_view key, std::string message);

  std::string path_of(std::string_view key) const;
  void close();

 private:
  template <typename U>
  std::optional<U> parse_value(std::string_view key, Need need, const Parse<U>& parse) {
    const YAML::Node value = take(key, need);
    if (!value) return std::nullopt;
    std::string why;
    std::optional<U> parsed = parse(value, why);
    if (!parsed) diagnostics_.error(value.Mark(), path_of(key), why);
    return parsed;
  }

  // The value under `key`, or an undefined node (after reporting it when required) if absent or null.
  YAML::Node take(std::string_view key, Need need);

  YAML::Node node_;
  std::string path_;
  YAML::Mark mark_;
  Diagnostics& diagnostics_;
  std::vector<std::string> known_keys_;
  bool report_missing_;
  bool closed_ = false;
};

// Parsers for the value types of the configuration.
Section::Parse<std::string> string_value();
Section::Parse<std::string> one_of(std::vector<std::string> allowed);
Section::Parse<bool> boolean();
Section::Parse<std::int64_t> integer(std::int64_t min, std::int64_t max);
Section::Parse<std::chrono::milliseconds> duration(std::chrono::milliseconds min, std::chrono::milliseconds max);
// A path, with ${NAME} replaced by the environment variable NAME (e.g. ${CREDENTIALS_DIRECTORY}).
Section::Parse<std::filesystem::path> path();
// A list of strings.
Section::Parse<std::vector<std::string>> string_list();
// A plain SQL identifier: a lower-case letter or underscore, then letters, digits, underscores.
Section::Parse<std::string> sql_identifier(std::size_t max_length);
// An ISO 8601 date-time with a time zone, normalised to UTC ("2026-03-01T00:00:00.000Z").
Section::Parse<std::string> timestamp();

}  // namespace fulfillsync::config::detail
