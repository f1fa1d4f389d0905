#pragma once
// The operation handlers, one file per resource group; the route table in routes.cpp maps the
// API's paths to them.
#include "fulfillsync/sandbox/call.hpp"

namespace fulfillsync::sandbox {

// channels_orders.cpp
HttpResponse list_channels(Call& call);
HttpResponse create_order(Call& call);
HttpResponse list_orders(Call& call);
HttpResponse get_order(Call& call);
HttpResponse cancel_order(Call& call);
HttpResponse shipment_timeline(Call& call);
HttpResponse batch_update_tracking_upload(Call& call);
// estimate.cpp
HttpResponse estimate_order(Call& call);
// simulate.cpp
HttpResponse simulate_shipment(Call& call);
HttpResponse simulation_status(Call& call);
// catalog.cpp
HttpResponse get_product(Call& call);
HttpResponse create_product(Call& call);
HttpResponse list_products(Call& call);
HttpResponse patch_product(Call& call);
HttpResponse list_variants(Call& call);
HttpResponse create_variants(Call& call);
HttpResponse patch_variants(Call& call);
HttpResponse delete_channel_metadata(Call& call);
HttpResponse get_packaging_requirements(Call& call);
HttpResponse get_taxonomy(Call& call);
HttpResponse list_allergens(Call& call);
// inventory.cpp
HttpResponse get_inventory(Call& call);
HttpResponse get_inventory_lots(Call& call);
HttpResponse query_inventory_history(Call& call);
// returns.cpp
HttpResponse create_return(Call& call);
HttpResponse get_return(Call& call);
HttpResponse list_returns(Call& call);
HttpResponse update_return(Call& call);
// receiving.cpp
HttpResponse set_external_sync(Call& call);
HttpResponse get_receiving(Call& call);
HttpResponse create_receiving(Call& call);
HttpResponse receiving_distributions(Call& call);
HttpResponse list_unidentified_receiving(Call& call);
HttpResponse get_unidentified_receiving(Call& call);
HttpResponse associate_unidentified_receiving(Call& call);

class Sandbox;
// oauth.cpp: GET /connect/authorize and POST /connect/token (outside the versioned paths).
HttpResponse oauth_authorize(Sandbox& sandbox, const HttpRequest& request);
HttpResponse oauth_token(Sandbox& sandbox, const HttpRequest& request);
// admin.cpp: /_sandbox/... (the caller has checked the admin token).
HttpResponse handle_admin(Sandbox& sandbox, const HttpRequest& request);
// Whether an admin request changes state (and so is journaled).
bool admin_changes_state(const HttpRequest& request);

// routes.cpp
struct Route {
  std::string_view method;
  std::string_view pattern;  // after /{version}; "{}" is a path parameter, may carry a suffix ("{}:cancel")
  Version since;
  Scope scope;
  bool creates;    // needs service_channel_id naming a channel with the write scope
  bool journaled;  // changes state
  Handler handler;
};
const std::vector<Route>& routes();
// The route of `method` and `path_after_version`, filling `params`; `path_known` tells whether
// some route has that path with another method (405 rather than 404).
const Route* match_route(std::string_view method, std::string_view path_after_version,
                         std::vector<std::string_view>& params, bool& path_known, std::string& allowed);

}  // namespace fulfillsync::sandbox
