#pragma once
// Small shapes that several resources share: address, recipient, tag, and `{id, name}` references
// (a channel, a fulfillment center, a location).
//
// Every model member has a `{}` initializer, so a request can be built with designated initializers
// naming only what it sets (`Address{.city = "Springfield"}`) without -Wmissing-field-initializers.
#include <cstdint>
#include <optional>
#include <string>

namespace fulfillsync::api {

struct Address {
  std::optional<std::string> address1{}, address2{}, city{}, company_name{}, country{}, state{}, zip_code{};
  friend bool operator==(const Address&, const Address&) = default;
};

struct Recipient {
  std::optional<std::string> name{}, email{}, phone_number{};
  std::optional<std::string> full_name{};  // in shipments only
  std::optional<Address> address{};
  friend bool operator==(const Recipient&, const Recipient&) = default;
};

// Extra name/value information on orders and returns; the provider neither shows nor acts on it.
struct Tag {
  std::string name{}, value{};
  friend bool operator==(const Tag&, const Tag&) = default;
};

struct IdName {
  std::optional<std::int64_t> id{};
  std::optional<std::string> name{};
  friend bool operator==(const IdName&, const IdName&) = default;
};

}  // namespace fulfillsync::api
