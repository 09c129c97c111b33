// Real link shaping for fedberry-sim's emulated fleet: one network namespace
// per shaped client, joined to the host by a veth pair, with a tc token
// bucket (tbf) on both ends so downloads and uploads run at the profile's
// rate. The client runs inside its namespace (`ip netns exec`) and reaches
// the server at the host end of its veth. Needs root (CAP_NET_ADMIN), `ip`
// and `tc`. Every namespace created here is deleted by Teardown (and by the
// destructor); deleting a namespace removes its veth pair.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_SIM_LINK_SHAPER_H_
#define FEDBERRY_SIM_LINK_SHAPER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedberry::sim {

struct ShapedLink {
  std::string netns;         // the client's namespace
  std::string host_address;  // the server's address as the client sees it
};

class LinkShaper {
 public:
  // Commands and their output go to `log_path`.
  explicit LinkShaper(std::string log_path);
  ~LinkShaper();
  LinkShaper(const LinkShaper&) = delete;
  LinkShaper& operator=(const LinkShaper&) = delete;

  // Creates client `index`'s namespace and a `mbit` link to the host.
  // Unavailable (with what to do) when `ip`/`tc` are missing or fail, e.g.
  // without root.
  absl::StatusOr<ShapedLink> Add(int index, double mbit);
  // The argv that runs `argv` inside `link`'s namespace.
  std::vector<std::string> Wrap(const ShapedLink& link,
                                const std::vector<std::string>& argv) const;
  // Deletes every namespace Add created.
  void Teardown();

 private:
  absl::Status Run(const std::vector<std::string>& argv);

  std::string log_path_;
  std::string tag_;  // per-simulator prefix of names
  std::vector<std::string> namespaces_;
};

}  // namespace fedberry::sim

#endif  // FEDBERRY_SIM_LINK_SHAPER_H_
