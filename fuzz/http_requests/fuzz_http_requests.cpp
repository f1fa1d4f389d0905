// libFuzzer target for what fulfillsyncd's metrics endpoint reads before it answers: any bytes as a
// request header through the endpoint's parser and limits, then its Authorization and Accept-Encoding
// fields. The raw input also goes to the Authorization decoder directly. A bug is a crash, a sanitizer
// report, an exception, a header accepted beyond kMaxRequestHeader, or credentials whose user name
// holds a colon (the first colon separates user and password).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <boost/beast/http/field.hpp>

#include "fulfillsync/daemon/service/http_request.hpp"

namespace {

using namespace fulfillsync::daemon;

void check_credentials(std::string_view header) {
  if (const auto credentials = parse_basic_authorization(header)) {
    if (credentials->user.find(':') != std::string::npos) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_credentials(bytes);
  (void)accepts_gzip(bytes);
  const auto request = parse_request_header(bytes);
  if (!request) return 0;
  const std::string_view header_end = "\r\n\r\n";
  const auto end = bytes.find(header_end);
  // The parser also ends a header at a bare "\n\n"; either way it must lie within the limit.
  const auto bare_end = bytes.find("\n\n");
  const auto first_end = std::min(end, bare_end);
  if (first_end == std::string_view::npos || first_end > kMaxRequestHeader) std::abort();
  check_credentials(sv((*request)[boost::beast::http::field::authorization]));
  (void)accepts_gzip(sv((*request)[boost::beast::http::field::accept_encoding]));
  (void)sv(request->target());
  return 0;
}
