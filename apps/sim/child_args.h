// The command lines fedberry-sim gives its children, built from the plan:
// the server, the site gateways (fedberry-server --upstream) and the
// boards (fedberry-emulated-client). The server's settings the plan passes
// through (plan.server) become flags with apps::ServerArgsFrom: those that
// differ from the server's defaults.
// Thread-safety: pure functions.
#ifndef FEDBERRY_APPS_SIM_CHILD_ARGS_H_
#define FEDBERRY_APPS_SIM_CHILD_ARGS_H_

#include <string>
#include <vector>

#include "apps/sim/sim_plan.h"
#include "sim/link_shaper.h"
#include "sim/local_pki.h"

namespace fedberry::sim {

// The ports the federation's servers listen on, chosen before any starts.
struct SimPorts {
  int server = 0;
  std::vector<int> gateways;  // gateway g's, GatewayCount(plan) of them
};

// The server's argv. `pki`: mutual TLS with its files (null: none; with
// shaped links the server then listens in plaintext beyond loopback).
std::vector<std::string> ServerArgs(const SimPlan& plan, const SimPorts& ports,
                                    const LocalPki* pki);

// Site gateway `g`'s argv: it joins the server on 127.0.0.1 and waits for
// its own boards (GatewayBoards).
std::vector<std::string> GatewayArgs(const SimPlan& plan, int g,
                                     const SimPorts& ports);

// Client `index`'s argv: it dials its gateway (client i joins gateway
// i % gateways) or the server, on loopback or, through `link` (null: not
// shaped), at the host end of its veth. `pki` as for ServerArgs. The argv
// runs the client directly: LinkShaper::Wrap puts it in its namespace.
std::vector<std::string> ClientArgs(const SimPlan& plan, int index,
                                    const SimPorts& ports,
                                    const ShapedLink* link,
                                    const LocalPki* pki);

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_CHILD_ARGS_H_
