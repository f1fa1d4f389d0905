#include "yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <tuple>

#include <fmt/format.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/duration.hpp"

namespace fulfillsync::config::detail {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

const char* kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "nothing";
  }
}

// The scalar text of a value, or nothing (with the reason) when the value is a mapping or a list.
std::optional<std::string> scalar(const YAML::Node& value, std::string& why, std::string_view expected) {
  if (!value.IsScalar()) {
    why = fmt::format("expected {}, found {}", expected, kind_of(value));
    return std::nullopt;
  }
  return value.Scalar();
}

}  // namespace

void Diagnostics::error(const YAML::Mark& mark, std::string key_path, std::string message) {
  // yaml-cpp marks count from 0; a null mark (-1) has no place in the file.
  const bool placed = mark.line >= 0;
  list_.push_back(Diagnostic{file_, placed ? mark.line + 1 : 0, placed ? mark.column + 1 : 0, std::move(key_path),
                             std::move(message)});
}

std::vector<Diagnostic> Diagnostics::take() {
  std::stable_sort(list_.begin(), list_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return std::move(list_);
}

std::optional<OpenQuote> first_open_quote(std::string_view text) {
  int line = 0;
  std::size_t line_start = 0;
  // Whether only blanks, or an indicator after which a value may start, precede on this line.
  bool value_may_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      value_may_start = true;
      continue;
    }
    if (c == ' ' || c == '\t') continue;
    if (c == '#' && (i == line_start || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;  // a comment, to the end of the line
      continue;
    }
    if ((c == '"' || c == '\'') && value_may_start) {
      OpenQuote open;
      open.mark.pos = static_cast<int>(i);
      open.mark.line = line;
      open.mark.column = static_cast<int>(i - line_start);
      std::size_t j = i + 1;
      bool same_line = true;
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') same_line = false;
        if (c == '"' && text[j] == '\\') {
          ++j;  // an escaped character
        } else if (text[j] == c) {
          if (c == '\'' && j + 1 < text.size() && text[j + 1] == '\'') {
            ++j;  // '' is a quote inside single quotes
          } else {
            break;
          }
        }
      }
      if (j >= text.size()) return open;
      if (!same_line) {
        open.closed_later = true;
        return open;
      }
      i = j;
      value_may_start = false;
      continue;
    }
    value_may_start = c == ':' || c == '-' || c == '[' || c == '{' || c == ',' || c == '?';
  }
  return std::nullopt;
}

Section::Section(const YAML::Node& node, std::string path, const YAML::Mark& fallback_mark, Diagnostics& diagnostics,
                 bool report_missing)
    : node_(node), path_(std::move(path)), mark_(fallback_mark), diagnostics_(diagnostics), report_missing_(report_missing) {
  if (!node_ || node_.IsNull()) {
    node_ = YAML::Node(YAML::NodeType::Map);
    return;
  }
  mark_ = node_.Mark();
  if (!node_.IsMap()) {
    diagnostics_.error(mark_, path_, fmt::format("expected a mapping of keys, found {}", kind_of(node_)));
    node_ = YAML::Node(YAML::NodeType::Map);
    closed_ = true;
    report_missing_ = false;  // one error says it: not each key it lacks as well
  }
}

std::string Section::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

bool Section::has(std::string_view key) const {
  const YAML::Node value = node_[std::string(key)];
  return value && !value.IsNull();
}

YAML::Node Section::take(std::string_view key, Need need) {
  known_keys_.emplace_back(key);
  YAML::Node value = node_[std::string(key)];
  if (value && !value.IsNull()) return value;
  if (need == Need::required && report_missing_) {
    diagnostics_.error(mark_, path_of(key), fmt::format("required key '{}' is missing", key));
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

Section Section::section(std::string_view key, Need need) {
  YAML::Node value = take(key, need);
  const bool reported_missing = need == Need::required && !value;
  return Section(value, path_of(key), mark_, diagnostics_, report_missing_ && !reported_missing);
}

void Section::reject(std::string_view key, std::string message) {
  const YAML::Node value = node_[std::string(key)];
  diagnostics_.error(value ? value.Mark() : mark_, path_of(key), std::move(message));
}

void Section::close() {
  if (closed_) return;
  closed_ = true;
  std::vector<std::string> seen;
  for (const auto& entry : node_) {
    const std::string name = entry.first.Scalar();
    const YAML::Mark mark = entry.first.Mark();
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      diagnostics_.error(mark, path_of(name), fmt::format("key '{}' appears more than once", name));
      continue;
    }
    seen.push_back(name);
    if (std::find(known_keys_.begin(), known_keys_.end(), name) != known_keys_.end()) continue;
    std::string message = fmt::format("unknown key '{}'", name);
    const auto closest = std::min_element(known_keys_.begin(), known_keys_.end(), [&](const auto& a, const auto& b) {
      return edit_distance(name, a) < edit_distance(name, b);
    });
    if (closest != known_keys_.end() && edit_distance(name, *closest) <= 2) {
      message += fmt::format(" (did you mean '{}'?)", *closest);
    }
    diagnostics_.error(mark, path_of(name), message);
  }
}

Section::Parse<std::string> string_value() {
  return [](const YAML::Node& value, std::string& why) { return scalar(value, why, "a string"); };
}

Section::Parse<std::string> one_of(std::vector<std::string> allowed) {
  return [allowed = std::move(allowed)](const YAML::Node& value, std::string& why) -> std::optional<std::string> {
    auto text = scalar(value, why, "a string");
    if (!text) return std::nullopt;
    if (std::find(allowed.begin(), allowed.end(), *text) != allowed.end()) return text;
    why = fmt::format("'{}' is not one of: {}", *text, fmt::join(allowed, ", "));
    return std::nullopt;
  };
}

Section::Parse<std::vector<std::string>> string_list() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<std::vector<std::string>> {
    if (!value.IsSequence()) {
      why = fmt::format("expected a list of strings, found {}", kind_of(value));
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& item : value) {
      if (!item.IsScalar()) {
        why = fmt::format("expected a list of strings, found {} in it", kind_of(item));
        return std::nullopt;
      }
      out.push_back(item.Scalar());
    }
    return out;
  };
}

Section::Parse<bool> boolean() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<bool> {
    auto text = scalar(value, why, "true or false");
    if (!text) return std::nullopt;
    if (*text == "true") return true;
    if (*text == "false") return false;
    why = fmt::format("expected true or false, found '{}'", *text);
    return std::nullopt;
  };
}

Section::Parse<std::int64_t> integer(std::int64_t min, std::int64_t max) {
  return [min, max](const YAML::Node& value, std::string& why) -> std::optional<std::int64_t> {
    auto text = scalar(value, why, "an integer");
    if (!text) return std::nullopt;
    std::int64_t number = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), number);
    if (error != std::errc{} || end != text->data() + text->size()) {
      why = fmt::format("expected an integer, found '{}'", *text);
      return std::nullopt;
    }
    if (number < min || number > max) {
      why = fmt::format("{} is out of range: allowed {} to {}", number, min, max);
      return std::nullopt;
    }
    return number;
  };
}

Section::Parse<std::chrono::milliseconds> duration(std::chrono::milliseconds min, std::chrono::milliseconds max) {
  return [min, max](const YAML::Node& value, std::string& why) -> std::optional<std::chrono::milliseconds> {
    auto text = scalar(value, why, "a duration");
    if (!text) return std::nullopt;
    const auto parsed = parse_duration(*text);
    if (!parsed) {
      why = fmt::format("'{}' is not a duration: write a number with a unit, e.g. 500ms, 30s, 5m, 1h", *text);
      return std::nullopt;
    }
    if (*parsed < min || *parsed > max) {
      why = fmt::format("{} is out of range: allowed {} to {}", *text, format_duration(min), format_duration(max));
      return std::nullopt;
    }
    return parsed;
  };
}

Section::Parse<std::filesystem::path> path() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<std::filesystem::path> {
    auto text = scalar(value, why, "a path");
    if (!text) return std::nullopt;
    std::string expanded;
    for (std::size_t pos = 0; pos < text->size();) {
      const std::size_t open = text->find("${", pos);
      if (open == std::string::npos) {
        expanded += text->substr(pos);
        break;
      }
      const std::size_t close = text->find('}', open);
      if (close == std::string::npos) {
        why = "unterminated ${ in path";
        return std::nullopt;
      }
      expanded += text->substr(pos, open - pos);
      const std::string name = text->substr(open + 2, close - open - 2);
      const char* env = std::getenv(name.c_str());
      if (env == nullptr) {
        why = fmt::format("environment variable {} is not set{}", name,
                          name == "CREDENTIALS_DIRECTORY" ? " (systemd sets it for units with LoadCredential=)" : "");
        return std::nullopt;
      }
      expanded += env;
      pos = close + 1;
    }
    if (expanded.empty()) {
      why = "path is empty";
      return std::nullopt;
    }
    return std::filesystem::path(expanded);
  };
}

Section::Parse<std::string> sql_identifier(std::size_t max_length) {
  return [max_length](const YAML::Node& value, std::string& why) -> std::optional<std::string> {
    auto text = scalar(value, why, "an SQL identifier");
    if (!text) return std::nullopt;
    const bool plain = !text->empty() && text->size() <= max_length && !(text->front() >= '0' && text->front() <= '9') &&
                       std::all_of(text->begin(), text->end(), [](char c) {
                         return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                       });
    if (!plain) {
      why = fmt::format(
          "'{}' is not a plain SQL identifier: use 1 to {} lower-case letters, digits and underscores, "
          "not starting with a digit",
          *text, max_length);
      return std::nullopt;
    }
    return text;
  };
}

Section::Parse<std::string> timestamp() {
  return [](const YAML::Node& value, std::string& why) -> std::optional<std::string> {
    auto text = scalar(value, why, "a date-time");
    if (!text) return std::nullopt;
    const auto when = timestamps::parse_iso8601(*text);
    if (!when || *when == timestamps::TimePoint::max() || *when == timestamps::TimePoint::min()) {
      why = fmt::format("'{}' is not a date-time with a time zone, such as 2026-03-01T00:00:00Z (UTC when no zone is given)", *text);
      return std::nullopt;
    }
    return timestamps::format_iso8601_z(*when);
  };
}

}  // namespace fulfillsync::config::detail
