#include "transports/ib/ib_transport.h"

#include <map>
#include <mutex>

#include "core/error.h"
#include "core/logging.h"
#include "transports/complete_transfers.h"

namespace chorus {
namespace {

constexpr uint32_t kInfoTag = 1, kReadyTag = 2;

// Runs the posted sends and receives to completion, or throws at the deadline naming the ranks still owed something.
void completeAll(const std::vector<PostedTransfer>& posted, int rank, const char* what, const Deadline& deadline) {
  const std::string context = errorContext(rank, "ib connection setup");
  auto timedOut = [&](const std::string& waiting) { return context + ": timed out " + what + " ranks " + waiting; };
  completeTransfers(posted, deadline, {context, timedOut, {}});
}

}  // namespace

IbTransport::IbTransport(int rank, const std::string& jobKey, const std::string& secret, IbTransportSettings settings)
    : rank_(rank), settings_(std::move(settings)), oob_(rank, jobKey + "/ib-oob", 1, settings_.ifnameSpec, secret) {
  oob_.setCardPrefix("ib.oob");
  oob_.useOneRail();
  oob_.setSocketFamily(settings_.socketFamily);
}

void IbTransport::describeSelf(PeerCard& card) {
  std::string why;
  if (settings_.disabled) {
    why = "CHORUS_IB_DISABLE=1";
  } else {
    const VerbsApi* api = settings_.emulation ? emulatedVerbs() : systemVerbs(&why);
    if (api)
      device_ = IbDevice::open(
          IbDeviceChoice{api, settings_.hcaSpec, settings_.gidIndex, settings_.ifnameSpec, settings_.socketFamily},
          &why);
  }
  if (!device_) {
    if (settings_.required) {
      throw Error(chorusSystemError,
                  errorContext(rank_) + ": CHORUS_TRANSPORT names ib, but the ib transport is unavailable: " + why);
    }
    static std::once_flag once;
    std::call_once(once, [&] { CHORUS_INFO(rank_, "ib transport off: " << why); });
    return;
  }
  oob_.describeSelf(card);
  card.entries["ib.port"] = device_->describe();
  // The software device's pairs reach only each other, and cost what TCP costs: a link of its own.
  card.entries["ib.link"] = settings_.emulation ? "soft-roce" : device_->isEthernet() ? "roce" : "ib";
  card.entries["ib.gid"] = gidText(device_->gid());
  CHORUS_INFO(rank_, "ib transport on " << device_->describe() << " (" << device_->api().origin << ")");
}

bool IbTransport::cardShowsRdmaPort(const PeerCard& card) {
  auto link = card.entries.find("ib.link");
  return link != card.entries.end() && (link->second == "roce" || link->second == "ib");
}

bool IbTransport::canConnect(const PeerCard& self, const PeerCard& peer) const {
  auto link = self.entries.find("ib.link");
  auto peerLink = peer.entries.find("ib.link");
  if (link == self.entries.end() || peerLink == peer.entries.end() || link->second != peerLink->second) return false;
  if (!self.entries.count("ib.oob.addr") || !peer.entries.count("ib.oob.addr")) return false;
  if (link->second == "ib") {
    // One InfiniBand subnet: the GIDs' 64-bit subnet prefixes (the first 16 hex digits) agree.
    return self.entries.at("ib.gid").substr(0, 16) == peer.entries.at("ib.gid").substr(0, 16);
  }
  return true;  // RoCE: routable over IP
}

std::vector<std::unique_ptr<Connection>> IbTransport::connectAll(const PeerCard& self,
                                                                  const std::vector<PeerCard>& peers,
                                                                  Deadline deadline) {
  std::vector<std::unique_ptr<Connection>> oobs = oob_.connectAll(self, peers, deadline);
  std::vector<std::unique_ptr<IbConnection>> ibs;
  for (auto& oob : oobs) {
    const int peer = oob->peer();
    ibs.push_back(std::make_unique<IbConnection>(rank_, peer, device_, settings_.qp, std::move(oob)));
  }
  // Trade queue pair addresses; every side moves to RTR; trade "ready"; then RTS (a request never reaches a queue
  // pair that cannot receive it yet).
  std::vector<std::vector<char>> mine, theirs;
  std::vector<Connection*> oobConns;
  for (auto& ib : ibs) {
    mine.push_back(ib->localInfo());
    theirs.emplace_back(mine.back().size());
    oobConns.push_back(&ib->oob());
  }
  std::vector<PostedTransfer> posted;
  for (size_t i = 0; i < ibs.size(); ++i) {
    posted.push_back({oobConns[i], oobConns[i]->isend(mine[i].data(), mine[i].size(), kInfoTag),
                      oobConns[i]->irecv(theirs[i].data(), theirs[i].size(), kInfoTag)});
  }
  completeAll(posted, rank_, "trading queue pair addresses with", deadline);
  for (size_t i = 0; i < ibs.size(); ++i) ibs[i]->readyToReceive(theirs[i]);
  char ready = 1;
  std::vector<char> peerReady(ibs.size());
  posted.clear();
  for (size_t i = 0; i < ibs.size(); ++i) {
    posted.push_back(
        {oobConns[i], oobConns[i]->isend(&ready, 1, kReadyTag), oobConns[i]->irecv(&peerReady[i], 1, kReadyTag)});
  }
  completeAll(posted, rank_, "waiting for the queue pairs of", deadline);
  std::vector<std::unique_ptr<Connection>> out;
  for (auto& ib : ibs) {
    ib->readyToSend();
    out.push_back(std::move(ib));
  }
  return out;
}

}  // namespace chorus
