#include "src/flight/comm_flight.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/logging.h"
#include "src/flight/flight_json.h"
#include "src/flight/flight_service.h"

namespace chorus {
namespace {

// The address this host reaches storeHost from: what the store's other clients (chorus-inspect among them) can
// reach it by, across the lab's namespaces too. A UDP connect sends nothing; it only picks the route.
std::string addressTowards(const std::string& storeHost, uint16_t storePort) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(storeHost.c_str(), std::to_string(storePort).c_str(), &hints, &found) != 0 || found == nullptr) {
    return "127.0.0.1";
  }
  std::string address = "127.0.0.1";
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in self{};
  socklen_t length = sizeof(self);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&self), &length) == 0) {
    char text[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &self.sin_addr, text, sizeof(text)) != nullptr) address = text;
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return address;
}

}  // namespace

CommFlight::CommFlight(size_t capacity, const std::string& dumpDir, FlightIdentity id)
    : recorder_(capacity, std::move(id)), file_(dumpDir, recorder_.identity()) {
  flight_service::add(this, !dumpDir.empty());
}

CommFlight::~CommFlight() { flight_service::remove(this); }

void CommFlight::dump(const char* why) const {
  if (file_.path().empty()) return;
  const int rank = recorder_.identity().rank;
  if (file_.write(recorder_)) {
    CHORUS_INFO(rank, "flight record written to " << file_.path() << " (" << why << ")");
  } else if (errno != 0) {
    CHORUS_WARN(rank, "flight record " << file_.path() << " (" << why << "): " << std::strerror(errno));
  }
}

std::string CommFlight::json(size_t newest) const {
  std::string text;
  FlightJsonOut out(&text);
  writeFlightJson(recorder_, out, newest);
  return text;
}

void CommFlight::publishCard(StoreClient& store, const std::string& storeHost, uint16_t storePort,
                             Deadline deadline) const {
  const uint16_t port = flight_service::listenerPort();
  if (port == 0) return;
  const FlightIdentity& id = recorder_.identity();
  const std::string card = addressTowards(storeHost, storePort) + ":" + std::to_string(port) + " " +
                           std::to_string(id.rank) + " " + std::to_string(id.size) + " " + id.identity;
  try {
    const int64_t index = store.add(kInspectCardCount, 1, deadline);
    store.set(inspectCardKey(index), bytesOf(card), deadline);
  } catch (const Error& e) {
    CHORUS_WARN(id.rank,
                "flight recorder: no inspect card in the store (chorus-inspect will not see this rank): " << e.what());
  }
}

}  // namespace chorus
