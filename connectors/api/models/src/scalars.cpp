#include "fulfillsync/api/models/scalars.hpp"

namespace fulfillsync::api {

namespace {

// -?(0|[1-9][0-9]{0,I})(\.[0-9]{1,F})?([eE][+-]?[0-9]{1,E})?
bool is_number_within(std::string_view text, std::size_t integer_digits, std::size_t fraction_digits,
                      std::size_t exponent_digits) {
  std::size_t i = 0;
  const auto digits = [&](std::size_t most) {
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start && i - start <= most;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (!digits(integer_digits)) {
    return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits(fraction_digits)) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits(exponent_digits)) return false;
  }
  return i == text.size();
}

constexpr std::size_t kUnbounded = std::string_view::npos;

}  // namespace

bool Money::is_valid_text(std::string_view text) { return is_number_within(text, kUnbounded, kUnbounded, kUnbounded); }

bool Money::is_sendable_text(std::string_view text) { return is_number_within(text, 18, 12, 2); }

std::string DateTime::to_iso8601() const {
  using namespace std::chrono;
  // Not at - floor<seconds>(at): that overflows near TimePoint::min(), where parsing saturates.
  const bool whole_milliseconds = at.time_since_epoch() % milliseconds(1) == timestamps::TimePoint::duration::zero();
  return timestamps::format_iso8601(
      at, whole_milliseconds ? timestamps::Precision::milliseconds : timestamps::Precision::microseconds);
}

}  // namespace fulfillsync::api
