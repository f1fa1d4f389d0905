#include "fulfillsync/daemon/service/http_request.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>

namespace fulfillsync::daemon {
namespace beast = boost::beast;
namespace {

std::optional<std::string> base64_decode(std::string_view text) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    const auto index = kAlphabet.find(c);
    if (index == std::string_view::npos) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(index);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

// Not beast::iequals: Boost 1.74's reads one byte past the end when the last characters differ in case.
bool iequals(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) {
           return lower(x) == lower(y);
         });
}

}  // namespace

void limit_request_parser(HttpRequestParser& parser) {
  parser.header_limit(static_cast<std::uint32_t>(kMaxRequestHeader));
  parser.body_limit(0);
}

bool accepts_gzip(std::string_view accept_encoding) {
  std::size_t start = 0;
  while (start <= accept_encoding.size()) {
    std::size_t end = accept_encoding.find(',', start);
    if (end == std::string_view::npos) end = accept_encoding.size();
    std::string_view item = accept_encoding.substr(start, end - start);
    const std::size_t semicolon = item.find(';');
    std::string_view coding = item.substr(0, semicolon);
    while (!coding.empty() && std::isspace(static_cast<unsigned char>(coding.front()))) coding.remove_prefix(1);
    while (!coding.empty() && std::isspace(static_cast<unsigned char>(coding.back()))) coding.remove_suffix(1);
    if (iequals(coding, "gzip")) {
      if (semicolon == std::string_view::npos) return true;
      std::string params(item.substr(semicolon + 1));
      params.erase(std::remove_if(params.begin(), params.end(), [](char c) { return std::isspace(c) != 0; }),
                   params.end());
      return !(params == "q=0" || params == "q=0.0" || params == "q=0.00" || params == "q=0.000");
    }
    start = end + 1;
  }
  return false;
}

std::optional<BasicCredentials> parse_basic_authorization(std::string_view header) {
  constexpr std::string_view kScheme = "basic ";
  if (header.size() < kScheme.size() || !iequals(header.substr(0, kScheme.size()), kScheme)) {
    return std::nullopt;
  }
  std::string_view encoded = header.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  const auto decoded = base64_decode(encoded);
  if (!decoded) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return BasicCredentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

std::optional<HttpRequest> parse_request_header(std::string_view bytes) {
  HttpRequestParser parser;
  limit_request_parser(parser);
  beast::error_code ec;
  std::size_t used = 0;
  while (!parser.is_header_done()) {
    const std::size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec || n == 0) return std::nullopt;
    used += n;
  }
  return parser.release();
}

}  // namespace fulfillsync::daemon
