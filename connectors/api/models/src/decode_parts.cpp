#include "decoders.hpp"

namespace fulfillsync::api::detail {

bool read_address_field(Reader& reader, std::string_view key, od::value& value, Address& out, bool& known) {
  known = true;
  if (key == "address1") return read(reader, value, out.address1);
  if (key == "address2") return read(reader, value, out.address2);
  if (key == "city") return read(reader, value, out.city);
  if (key == "company_name") return read(reader, value, out.company_name);
  if (key == "country") return read(reader, value, out.country);
  if (key == "state") return read(reader, value, out.state);
  if (key == "zip_code") return read(reader, value, out.zip_code);
  known = false;
  return true;
}

bool read(Reader& reader, od::value& value, Address& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    bool known = false;
    return read_address_field(reader, key, field, out, known);
  });
}

bool read(Reader& reader, od::value& value, Recipient& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "name") return read(reader, field, out.name);
    if (key == "email") return read(reader, field, out.email);
    if (key == "phone_number") return read(reader, field, out.phone_number);
    if (key == "full_name") return read(reader, field, out.full_name);
    if (key == "address") return read(reader, field, out.address);
    return true;
  });
}

bool read(Reader& reader, od::value& value, Tag& out) {
  static constexpr std::string_view kRequired[] = {"name"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "name") return required.read_field(0, field, out.name);
                       if (key == "value") {
                         std::optional<std::string> text;  // a tag without a value is still a tag
                         if (!read(reader, field, text)) return false;
                         out.value = text.value_or("");
                       }
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, IdName& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "name") return read(reader, field, out.name);
    return true;
  });
}

}  // namespace fulfillsync::api::detail
