#pragma once
// Percent-encoding and query strings, as the API, the OAuth server and its callbacks use them.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fulfillsync::api {

using Query = std::vector<std::pair<std::string, std::string>>;

// Percent-encodes a query component; RFC 3986 unreserved characters pass.
std::string url_encode(std::string_view text);
// Decodes %XX and '+' (a space in form bodies).
std::string url_decode(std::string_view text);

// "a=1&b=two%20words" -> {{"a","1"},{"b","two words"}}.
Query parse_query_string(std::string_view text);
// "a=1&b=..." from a query, encoded.
std::string encode_query(const Query& query);

// The query parameters of a link ("https://host/2026-07/channel?Cursor=abc" or "/channel?Cursor=abc").
Query query_of_link(std::string_view link);

}  // namespace fulfillsync::api
