#include "server/round/client_registry.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "server/declared_size_bound.h"

namespace fedberry::server {
namespace {

std::string RandomHex(int bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes) != 1) {
    // The OS has no entropy to give: no id is better than a guessable one.
    spdlog::critical("the system's random generator failed; stopping");
    std::abort();
  }
  return absl::BytesToHexString(raw);
}

}  // namespace

absl::Status ClientRegistry::CheckRoom(const std::string& name) const {
  if (clients_.size() < static_cast<size_t>(max_clients_)) {
    return absl::OkStatus();
  }
  const bool known =
      std::any_of(clients_.begin(), clients_.end(),
                  [&](const auto& c) { return c.second.name == name; });
  if (known) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the server holds ", clients_.size(),
      " registered clients, its limit (--max_clients); try again later"));
}

std::string ClientRegistry::Add(ClientRecord client) {
  std::string id =
      absl::StrCat(absl::StrFormat("c%04d-", next_++), RandomHex(16));
  clients_[id] = std::move(client);
  return id;
}

void ClientRegistry::Restore(const std::string& id, ClientRecord client) {
  clients_[id] = std::move(client);
  // Ids issued later must not repeat a restored one's sequence number.
  next_ =
      std::max<uint64_t>(next_, std::strtoull(id.c_str() + 1, nullptr, 10) + 1);
}

void ClientRegistry::Remove(const std::string& id) { clients_.erase(id); }

std::vector<RegisteredClient> ClientRegistry::Snapshot() const {
  std::vector<RegisteredClient> boards;
  boards.reserve(clients_.size());
  for (const auto& [id, c] : clients_) {
    boards.push_back({id, c.name, c.num_samples, c.allow_data_moves,
                      c.sample_bytes, c.boards, c.client_version});
  }
  return boards;
}

void ClientRegistry::RestoreFrom(
    const std::vector<RegisteredClient>& boards, absl::Time now,
    const std::function<bool(const RegisteredClient&)>& admit) {
  clients_.clear();
  for (const RegisteredClient& c : boards) {
    if (admit && !admit(c)) continue;
    ClientRecord info;
    info.name = c.name;
    info.client_version = c.client_version;
    info.num_samples = c.num_samples;
    info.allow_data_moves = c.allow_data_moves;
    info.sample_bytes = c.sample_bytes;
    info.boards = c.boards;
    info.joined = now;
    info.last_seen = now;
    info.heard = false;
    info.polled = true;
    Restore(c.id, std::move(info));
  }
}

ClientRecord* ClientRegistry::Find(const std::string& id) {
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : &it->second;
}

const ClientRecord* ClientRegistry::Find(const std::string& id) const {
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : &it->second;
}

namespace {

absl::Status Unknown(const std::string& id) {
  return absl::NotFoundError(absl::StrCat("unknown client id '",
                                          base::Printable(id),
                                          "': join the federation first"));
}

}  // namespace

absl::StatusOr<ClientRecord*> ClientRegistry::Lookup(const std::string& id) {
  ClientRecord* client = Find(id);
  if (client == nullptr) return Unknown(id);
  return client;
}

absl::StatusOr<const ClientRecord*> ClientRegistry::Lookup(
    const std::string& id) const {
  const ClientRecord* client = Find(id);
  if (client == nullptr) return Unknown(id);
  return client;
}

absl::StatusOr<std::string> ClientRegistry::NameOf(
    const std::string& id) const {
  FEDBERRY_ASSIGN_OR_RETURN(const ClientRecord* client, Lookup(id));
  return client->name;
}

std::vector<std::string> ClientRegistry::IdsNamed(
    const std::string& name) const {
  std::vector<std::string> ids;
  for (const auto& [id, client] : clients_) {
    if (client.name == name) ids.push_back(id);
  }
  return ids;
}

std::string ClientRegistry::CurrentId(const std::string& id,
                                      const std::string& name) const {
  if (clients_.count(id) > 0) return id;
  std::vector<std::string> ids = IdsNamed(name);
  return ids.empty() ? id : ids.back();
}

int ClientRegistry::Prune(absl::Time now, absl::Duration liveness,
                          const std::function<bool(const std::string&)>& keep) {
  int pruned = 0;
  for (auto it = clients_.begin(); it != clients_.end();) {
    if (!it->second.polled && now - it->second.joined > liveness &&
        !keep(it->first)) {
      it = clients_.erase(it);
      ++pruned;
    } else {
      ++it;
    }
  }
  return pruned;
}

std::vector<std::string> ClientRegistry::Available(
    absl::Time now, absl::Duration liveness) const {
  std::vector<std::string> ids;
  for (const auto& [id, client] : clients_) {
    if (client.polled && client.SeenWithin(now, liveness) &&
        client.condition.declined().empty()) {
      ids.push_back(id);
    }
  }
  return ids;
}

std::vector<uint64_t> ClientRegistry::DeclaredPerBoard() const {
  std::vector<uint64_t> per_board;
  per_board.reserve(clients_.size());
  for (const auto& [id, client] : clients_) {
    // A join alone proves nothing: boards that never asked for a task
    // (declarations anyone can send) would set the bound for the rest.
    if (!client.polled) continue;
    per_board.push_back(SamplesPerBoard(client.num_samples, client.boards));
  }
  return per_board;
}

int ClientRegistry::Declining(absl::Time now, absl::Duration liveness) const {
  int n = 0;
  for (const auto& [id, client] : clients_) {
    n += client.SeenWithin(now, liveness) &&
         !client.condition.declined().empty();
  }
  return n;
}

int ClientRegistry::AwaitingDone(absl::Time since) const {
  int n = 0;
  for (const auto& [id, c] : clients_) {
    // A board that joined and never asked for a task may never ask.
    n += !c.told_done && c.heard && c.polled && c.last_seen >= since;
  }
  return n;
}

void ClientRegistry::ResetStates() {
  for (auto& [id, client] : clients_) {
    client.state = v1::HeartbeatRequest::TRAINING;
  }
}

uint64_t ClientRegistry::samples() const {
  uint64_t n = 0;
  for (const auto& [id, client] : clients_) n += client.num_samples;
  return n;
}

}  // namespace fedberry::server
