#pragma once
// Fulfillment cost estimates (`POST /order:estimate`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/models/parts.hpp"
#include "fulfillsync/api/models/scalars.hpp"

namespace fulfillsync::api {

// Exactly one of `id` and `reference_id` (the encoder refuses anything else).
struct EstimateLine {
  std::optional<std::int64_t> id{};
  std::optional<std::string> reference_id{};
  std::int64_t quantity = 0;
};

struct EstimateRequest {
  Address address{};
  std::vector<EstimateLine> products{};
  std::optional<std::vector<std::string>> shipping_methods{};  // unset: every method of the merchant
};

struct Estimate {
  std::optional<std::string> shipping_method{}, estimated_currency_code{};
  std::optional<Money> estimated_price{};
  std::optional<IdName> fulfillment_center{};
  std::optional<double> total_weight_oz{};
};

struct EstimateResponse {
  std::vector<Estimate> estimates{};
};

}  // namespace fulfillsync::api
