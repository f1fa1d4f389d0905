#include "decoders.hpp"

namespace fulfillsync::api::detail {

bool read(Reader& reader, od::value& value, Channel& out) {
  static constexpr std::string_view kRequired[] = {"id"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "name") return read(reader, field, out.name);
                       if (key == "application_name") return read(reader, field, out.application_name);
                       if (key == "scopes") return read(reader, field, out.scopes);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, ChannelList& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "items") return read(reader, field, out.items);
    if (key == "next") return read(reader, field, out.next);
    if (key == "prev") return read(reader, field, out.prev);
    return true;
  });
}

}  // namespace fulfillsync::api::detail
