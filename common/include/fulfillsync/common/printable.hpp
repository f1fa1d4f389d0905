#pragma once
// Text that came from outside (a merchant's row, a provider's answer), made safe for a log line, a
// terminal or a TEXT column: valid UTF-8 is kept as it is, and every byte that is not part of valid
// UTF-8, and every control character (C0, DEL, C1: a newline that would forge a log line, an escape
// sequence that would drive the terminal), is written as `\xNN`. `Gen\xE8ve` for Latin-1 "Genève".
#include <string>
#include <string_view>

namespace fulfillsync::text {

std::string printable(std::string_view text);

}  // namespace fulfillsync::text
