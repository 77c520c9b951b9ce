// One record per transport, in probe order: the only place that knows which transports exist. A new transport is
// one record here (and one line in the connection conformance suite).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transports/transport.h"

namespace chorus {

struct CommConfig;

enum class TransportId { kShm, kIb, kTcp };

// What carries a transport's bytes: memory shared with the peer (the host's own link classes, as the topology
// places the pair) or the network (the network's link class, whatever the placement).
enum class TransportMedium { kSharedMemory, kNetwork };

struct TransportRecord {
  TransportId id;
  const char* name;  // in config.transports / CHORUS_TRANSPORT, logs and tools
  TransportMedium medium;
  // Makes the transport as the config says; secret: what every connection must prove (empty: unauthenticated).
  std::unique_ptr<Transport> (*make)(int rank, const CommConfig& config, const std::string& jobKey,
                                     const std::string& secret);
};

// Every transport compiled in, fastest first: the order in which each pair probes them.
const std::vector<TransportRecord>& transportRegistry();
// The record of `id`.
const TransportRecord& transportRecord(TransportId id);

// A transport made for a communicator, with its record.
struct ChosenTransport {
  const TransportRecord* record;
  std::unique_ptr<Transport> transport;
};

// True when this rank's card, once every transport described itself, shows that the network between hosts will be
// RDMA (an ib port on real hardware): the cost model then uses the rdma link class for it, else the network one.
bool networkIsRdma(const PeerCard& card);

// The transports config.transports allows (every one when empty), in probe order, made as the config says.
// Throws chorusInvalidArgument for an unknown name or a list that leaves none.
std::vector<ChosenTransport> makeTransports(int rank, const CommConfig& config, const std::string& jobKey,
                                            const std::string& secret);

}  // namespace chorus
