#pragma once
// `fulfillsyncd auth login`: the OAuth authorization-code flow with PKCE, once, at installation.
#include "fulfillsync/config/config.hpp"

namespace fulfillsync::daemon {

// Prints the authorize URL, takes the callback on the loopback redirect listener (or a callback URL
// pasted on standard input), checks `state`, exchanges the code and stores the tokens in the
// checkpoint store. Returns the exit code.
int auth_login(const config::Config& config);

}  // namespace fulfillsync::daemon
