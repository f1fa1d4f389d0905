#include "fulfillsync/sandbox/http_types.hpp"

namespace fulfillsync::sandbox {

std::string_view HttpRequest::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return {};
}

bool HttpRequest::has_header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return true;
  }
  return false;
}

std::string_view HttpRequest::path() const {
  const std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string_view HttpRequest::query() const {
  const std::string_view t = target;
  const auto mark = t.find('?');
  return mark == std::string_view::npos ? std::string_view{} : t.substr(mark + 1);
}

void HttpResponse::set_header(std::string name, std::string value) {
  for (auto& [existing, old] : headers) {
    if (existing == name) {
      old = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
}

}  // namespace fulfillsync::sandbox
