#include "src/flight/comm_flight.h"

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/host_port.h"
#include "core/logging.h"
#include "src/flight/flight_json.h"
#include "src/flight/flight_service.h"

namespace chorus {

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

void CommFlight::publishCard(StoreClient& store, Deadline deadline) const {
  const uint16_t port = flight_service::listenerPort();
  const FlightIdentity& id = recorder_.identity();
  const std::string host = store.localHost();
  if (port == 0 || host.empty()) return;
  const std::string card = joinHostPort(host, port) + " " + std::to_string(id.rank) + " " + std::to_string(id.size) +
                           " " + id.identity + " " + flight_service::listenerToken();
  try {
    const int64_t index = store.add(kInspectCardCount, 1, deadline);
    store.set(inspectCardKey(index), bytesOf(card), deadline);
  } catch (const Error& e) {
    CHORUS_WARN(id.rank,
                "flight recorder: no inspect card in the store (chorus-inspect will not see this rank): " << e.what());
  }
}

}  // namespace chorus
