#pragma once
// The transport-neutral request and response the API layer works on; the server converts to and
// from Beast so that no other file needs Beast.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fulfillsync::sandbox {

struct HttpRequest {
  std::string method;  // as sent, e.g. "POST"
  std::string target;  // as sent, path and query
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  // The value of the first header of that (lower-case) name, empty when absent.
  std::string_view header(std::string_view lower_name) const;
  bool has_header(std::string_view lower_name) const;
  std::string_view path() const;   // target up to '?'
  std::string_view query() const;  // after '?', empty when none
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  void set_header(std::string name, std::string value);
};

}  // namespace fulfillsync::sandbox
