#pragma once
// OAuth tokens kept in the checkpoint store's `tokens` table, committed with a full sync.
#include "fulfillsync/api/oauth.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"

namespace fulfillsync::daemon {

class CheckpointTokenStore final : public api::TokenStore {
 public:
  explicit CheckpointTokenStore(CheckpointStore& store) : store_(store) {}
  std::optional<api::OAuthTokens> load() override;
  void save(const api::OAuthTokens& tokens) override;

 private:
  CheckpointStore& store_;
};

}  // namespace fulfillsync::daemon
