#include "perf/chorus_topo/tcp_interfaces.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/comm_config.h"
#include "core/params.h"
#include "topology/network_interfaces.h"
#include "transports/tcp/tcp_hello.h"
#include "transports/tcp/tcp_rail_probe.h"
#include "transports/tcp/tcp_rails.h"
#include "transports/tcp/tcp_transport.h"

namespace chorus::topo {

void printTcpInterfaces(std::ostream& out, const GlobalTopology& world) {
  const std::string spec = params::socketIfname();
  const int nsocks = env_config::socketsPerPeer();
  const size_t fit = std::max<size_t>(1, TcpHello::kMaxSockets / static_cast<size_t>(nsocks));
  const std::vector<NetworkInterface> rails =
      chooseNetworkInterfaces(spec, std::min(TcpTransport::kMaxRails, fit), env_config::socketFamily());
  out << "\nTCP interfaces (CHORUS_SOCKET_IFNAME=" << (spec.empty() ? "unset: the first that is not loopback, "
                                                                      "and every other up of its kind"
                                                                    : "'" + spec + "'")
      << "): " << rails.size() << (rails.size() == 1 ? " rail" : " rails") << ", " << nsocks
      << (nsocks == 1 ? " socket" : " sockets") << " per rail and peer (CHORUS_NSOCKS)\n";
  std::vector<std::string> names;
  for (size_t r = 0; r < rails.size(); ++r) {
    out << "  rail " << r + 1 << "  " << rails[r].name << "  " << rails[r].address << "  "
        << (interfaceIsUp(rails[r].name) ? "up" : "DOWN") << "\n";
    names.push_back(rails[r].name);
  }
  std::string pairs;
  for (auto [mine, theirs] : pairRails(names, names)) {
    pairs += (pairs.empty() ? "" : ", ") + names[mine] + " <-> " + names[theirs];
  }
  if (rails.size() > 1) {
    out << "  a striped message's share per rail is measured when a pair connects (" << (kRailProbeBytes >> 20)
        << " MiB per rail, once)\n";
  }
  const std::string only = params::transport();
  const bool shm = only.empty() || ("," + only + ",").find(",shm,") != std::string::npos;
  out << "Per peer of rank 0 (hosts like this one)\n";
  constexpr int kShown = 16;
  for (int p = 1; p < world.nranks() && p <= kShown; ++p) {
    out << "  rank " << p << " (host " << world.hostOf(p) << "): ";
    if (world.hostOf(p) == world.hostOf(0) && shm) {
      out << "shared memory\n";
    } else {
      out << "tcp over " << pairs << "\n";
    }
  }
  if (world.nranks() > kShown + 1) out << "  ... (" << world.nranks() - kShown - 1 << " more)\n";
}

}  // namespace chorus::topo
