#pragma once
// Encoding request bodies. Strings are escaped by JsonWriter; a string that is not valid UTF-8 is
// refused (the error names its path) instead of being sent as JSON the provider would reject.
// Unset optional members are omitted; money is written from its exact text.
#include <cstddef>
#include <string_view>

#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/api/models/estimate.hpp"
#include "fulfillsync/api/models/order.hpp"
#include "fulfillsync/api/models/receiving.hpp"
#include "fulfillsync/api/models/result.hpp"
#include "fulfillsync/api/models/return_order.hpp"
#include "fulfillsync/api/models/shipment.hpp"

namespace fulfillsync::api {

// A text's length as the provider counts it against its limits: UTF-16 code units (it is an ASP.NET
// service), so a character outside the Basic Multilingual Plane counts twice.
std::size_t provider_length(std::string_view utf8);

Encoded encode(const OrderCreateRequest& request, ApiVersion version);
Encoded encode(const ReturnCreateRequest& request, ApiVersion version);
// Lines may carry `lot_number`/`lot_date` from 2026-01.
Encoded encode(const ReturnUpdateRequest& request, ApiVersion version);
Encoded encode(const TrackingUploadRequest& request, ApiVersion version);
Encoded encode(const SetExternalSyncRequest& request, ApiVersion version);
Encoded encode(const EstimateRequest& request, ApiVersion version);

}  // namespace fulfillsync::api
