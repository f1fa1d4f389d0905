#pragma once
// What the metrics endpoint reads from a client before it answers: the request header, parsed with
// fixed limits, and the Authorization and Accept-Encoding fields. Apart from the server, so that a
// fuzz target can drive it (fuzz/http_requests).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>

namespace fulfillsync::daemon {

// The largest request header accepted (request line and fields). Requests with a body are refused.
inline constexpr std::size_t kMaxRequestHeader = 8 * 1024;

using HttpRequest = boost::beast::http::request<boost::beast::http::empty_body>;
using HttpRequestParser = boost::beast::http::request_parser<boost::beast::http::empty_body>;

// Puts the endpoint's limits on `parser`: kMaxRequestHeader for the header, no body.
void limit_request_parser(HttpRequestParser& parser);

// Parses `bytes` as one request header with the endpoint's limits; nullopt when it is not a complete,
// acceptable one.
std::optional<HttpRequest> parse_request_header(std::string_view bytes);

struct BasicCredentials {
  std::string user;
  std::string password;
};
// The credentials of an `Authorization: Basic base64(user:password)` value; nullopt for any other.
std::optional<BasicCredentials> parse_basic_authorization(std::string_view header);

// Whether an Accept-Encoding value allows gzip ("gzip", "gzip;q=0.5", but not "gzip;q=0").
bool accepts_gzip(std::string_view accept_encoding);

// Beast 1.74 speaks boost::string_view.
inline std::string_view sv(boost::beast::string_view text) { return {text.data(), text.size()}; }

}  // namespace fulfillsync::daemon
