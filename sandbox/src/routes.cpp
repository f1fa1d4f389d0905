#include "fulfillsync/sandbox/handlers.hpp"

namespace fulfillsync::sandbox {
namespace {

using V = Version;
using S = Scope;

bool match_segment(std::string_view pattern, std::string_view segment, std::vector<std::string_view>& params) {
  if (!pattern.starts_with("{}")) return pattern == segment;
  const std::string_view suffix = pattern.substr(2);
  if (segment.size() <= suffix.size() || !segment.ends_with(suffix)) return false;
  params.push_back(segment.substr(0, segment.size() - suffix.size()));
  return true;
}

bool match_path(std::string_view pattern, std::string_view path, std::vector<std::string_view>& params) {
  params.clear();
  while (true) {
    const auto pattern_end = pattern.find('/');
    const auto path_end = path.find('/');
    if ((pattern_end == std::string_view::npos) != (path_end == std::string_view::npos)) return false;
    if (!match_segment(pattern.substr(0, pattern_end), path.substr(0, path_end), params)) return false;
    if (pattern_end == std::string_view::npos) return true;
    pattern.remove_prefix(pattern_end + 1);
    path.remove_prefix(path_end + 1);
  }
}

}  // namespace

const std::vector<Route>& routes() {
  static const std::vector<Route> table = {
      {"GET", "channel", V::v2025_07, S::channels_read, false, false, list_channels},
      {"POST", "order", V::v2025_07, S::orders_write, true, true, create_order},
      {"GET", "order", V::v2025_07, S::orders_read, false, false, list_orders},
      {"POST", "order:estimate", V::v2025_07, S::orders_read, true, false, estimate_order},
      {"GET", "order/{}", V::v2025_07, S::orders_read, false, false, get_order},
      {"POST", "order/{}:cancel", V::v2025_07, S::orders_write, false, true, cancel_order},
      {"GET", "order/{}/shipment/{}/timeline", V::v2025_07, S::orders_read, false, false, shipment_timeline},
      {"POST", "shipment:batchUpdateTrackingUpload", V::v2025_07, S::fulfillments_write, false, true,
       batch_update_tracking_upload},
      {"POST", "simulate/shipment", V::v2025_07, S::orders_write, false, true, simulate_shipment},
      {"GET", "simulate/status/{}", V::v2025_07, S::orders_read, false, false, simulation_status},
      {"GET", "product/{}", V::v2025_07, S::products_read, false, false, get_product},
      {"PATCH", "product/{}", V::v2025_07, S::products_write, false, true, patch_product},
      {"POST", "product", V::v2025_07, S::products_write, true, true, create_product},
      {"GET", "product", V::v2025_07, S::products_read, false, false, list_products},
      {"GET", "product/{}/variants", V::v2025_07, S::products_read, false, false, list_variants},
      {"POST", "product/{}/variants", V::v2025_07, S::products_write, true, true, create_variants},
      {"PATCH", "product/{}/variants", V::v2025_07, S::products_write, false, true, patch_variants},
      {"DELETE", "variant/{}/channel-metadata/{}", V::v2025_07, S::products_write, false, true,
       delete_channel_metadata},
      {"GET", "inventory/{}", V::v2025_07, S::inventory_read, false, false, get_inventory},
      {"GET", "inventory-level/{}/lots", V::v2025_07, S::inventory_read, false, false, get_inventory_lots},
      {"POST", "inventory/history:query", V::v2026_01, S::inventory_read, false, false, query_inventory_history},
      {"GET", "packaging-requirement", V::v2025_07, S::products_read, false, false, get_packaging_requirements},
      {"GET", "taxonomy/{}", V::v2025_07, S::products_read, false, false, get_taxonomy},
      {"GET", "allergens", V::v2026_07, S::products_read, false, false, list_allergens},
      {"POST", "return", V::v2025_07, S::returns_write, true, true, create_return},
      {"GET", "return/{}", V::v2025_07, S::returns_read, false, false, get_return},
      {"PUT", "return/{}", V::v2025_07, S::returns_write, false, true, update_return},
      {"GET", "return", V::v2025_07, S::returns_read, false, false, list_returns},
      {"POST", "receiving:setExternalSync", V::v2025_07, S::receiving_write, false, true, set_external_sync},
      {"GET", "receiving/{}", V::v2025_07, S::receiving_read, false, false, get_receiving},
      {"POST", "receiving", V::v2025_07, S::receiving_write, true, true, create_receiving},
      {"GET", "receiving/{}/distributions", V::v2025_07, S::receiving_read, false, false, receiving_distributions},
      {"GET", "unidentified-receiving-order", V::v2026_07, S::receiving_read, false, false,
       list_unidentified_receiving},
      {"GET", "unidentified-receiving-order/{}", V::v2026_07, S::receiving_read, false, false,
       get_unidentified_receiving},
      {"POST", "unidentified-receiving-order/{}:associateWRO", V::v2026_07, S::receiving_write, false, true,
       associate_unidentified_receiving},
  };
  return table;
}

const Route* match_route(std::string_view method, std::string_view path_after_version,
                         std::vector<std::string_view>& params, bool& path_known, std::string& allowed) {
  path_known = false;
  const Route* found = nullptr;
  std::vector<std::string_view> candidate;
  for (const auto& route : routes()) {
    if (!match_path(route.pattern, path_after_version, candidate)) continue;
    // "{}" must not swallow a literal sibling such as order:estimate.
    if (route.pattern == "order/{}" && path_after_version.find(':') != std::string_view::npos) continue;
    path_known = true;
    if (!allowed.empty()) allowed += ", ";
    allowed += route.method;
    if (route.method == method && found == nullptr) {
      found = &route;
      params = candidate;
    }
  }
  return found;
}

}  // namespace fulfillsync::sandbox
