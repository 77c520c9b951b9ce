// The C ABI: validate every argument before communicating, run, turn exceptions into codes + last error.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/store.h"
#include "core/comm_config.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/params.h"
#include "device/device_api.h"
#include "src/api/api_errors.h"
#include "src/api/argument_checks.h"
#include "src/api/comm_handle.h"
#include "src/api/config_arguments.h"
#include "src/api/group.h"
#include "src/api/host_stream.h"
#include "src/api/pmix_store.h"
#include "src/comm/comm_engine.h"
#include "topology/network_interfaces.h"

using chorus::Collective;
using chorus::Error;

using chorus::api::fail;
using chorus::api::guarded;
using namespace chorus::api::checks;

namespace {

chorusResult_t submitCall(const char* call, chorusComm_t comm, const chorus::CallArgs& op, const void* sendUsed,
                          const void* recvUsed, chorusStream_t stream);

// Send and receive: peer in range, no overflow, the buffer present; outside a group, not to itself (a blocking send
// to itself could never be received).
// A send or a receive; peer kAnyPeer with `source`: a receive from any rank (chorusRecvAny).
chorusResult_t pointToPoint(const char* call, Collective kind, void* buff, size_t count, chorusDataType_t datatype,
                            int peer, chorusComm_t comm, chorusStream_t stream, int* source = nullptr) {
  std::string bad = checkCommon(call, comm, datatype, chorusSum, false);
  size_t bytes = 0;
  const bool sends = kind == Collective::kSend;
  const bool anyPeer = peer == chorus::kAnyPeer;
  if (bad.empty() && anyPeer && !source) bad = whereOf(comm, call) + "source is NULL";
  if (bad.empty() && !anyPeer && (peer < 0 || peer >= comm->impl->size())) {
    bad = whereOf(comm, call) + "peer " + std::to_string(peer) + " is outside [0, " +
          std::to_string(comm->impl->size()) + ")";
  }
  if (bad.empty() && !bytesFor(count, datatype, 1, &bytes)) bad = whereOf(comm, call) + "count overflows";
  if (bad.empty() && count > 0 && !buff) {
    bad = whereOf(comm, call) + (sends ? "sendbuff" : "recvbuff") + " is NULL with count " + std::to_string(count);
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (anyPeer && chorus::api::inGroup()) {
    return fail(comm, chorusInvalidUsage,
                whereOf(comm, call) + "inside a group (which sender comes first decides the call: it runs alone)");
  }
  if (peer == comm->impl->rank() && !chorus::api::inGroup()) {
    return fail(comm, chorusInvalidUsage,
                whereOf(comm, call) + (sends ? "a send to itself" : "a receive from itself") +
                    " outside a group can never complete; put the send and the receive in one group");
  }
  if (anyPeer) *source = -1;
  chorus::CallArgs request{.collective = kind, .count = count, .type = datatype, .peer = peer, .source = source};
  if (sends) {
    request.send = buff;
  } else {
    request.recv = buff;
  }
  const void* used = count > 0 ? buff : nullptr;
  return submitCall(call, comm, request, sends ? used : nullptr, sends ? nullptr : used, stream);
}

std::string pointerText(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

// Where a call's buffers live: host memory (run now, on this thread) or device memory of one GPU (enqueued on the
// stream). Decided from the buffers this rank uses; mixing host and device memory in one call is refused.
struct Placement {
  bool device = false;
  int gpu = -1;
};

// `send` and `recv` are the buffers this rank reads and writes in the call (nullptr when it uses none: a broadcast's
// sendbuff off the root, a reduce's recvbuff off the root, count 0). Throws chorusInvalidArgument when they cannot
// be used together with `stream`.
Placement placeBuffers(const char* call, chorusComm_t comm, const void* send, const void* recv, chorusStream_t stream) {
  chorus::DeviceApi& api = comm->impl->deviceApi();
  // Without a device API every buffer is host memory: no runtime call on the host path.
  const bool canLocate = api.available();
  int sendGpu = -1, recvGpu = -1;
  const bool sendOnDevice = canLocate && send && api.locate(send, &sendGpu) == chorus::MemoryLocation::kDevice;
  const bool recvOnDevice = canLocate && recv && api.locate(recv, &recvGpu) == chorus::MemoryLocation::kDevice;
  auto kind = [](bool onDevice) { return onDevice ? "device" : "host"; };
  if (send && recv && sendOnDevice != recvOnDevice) {
    chorus::throwInvalidArgument(whereOf(comm, call) + "sendbuff " + pointerText(send) + " is " + kind(sendOnDevice) +
                                 " memory but recvbuff " + pointerText(recv) + " is " + kind(recvOnDevice) +
                                 " memory; both must be host memory or both device memory");
  }
  if (sendOnDevice && recvOnDevice && sendGpu != recvGpu) {
    chorus::throwInvalidArgument(whereOf(comm, call) + "sendbuff " + pointerText(send) + " is on GPU " +
                                 std::to_string(sendGpu) + " but recvbuff " + pointerText(recv) + " is on GPU " +
                                 std::to_string(recvGpu));
  }
  Placement p;
  if (sendOnDevice || recvOnDevice) {
    p.device = true;
    p.gpu = sendOnDevice ? sendGpu : recvGpu;
    return p;
  }
  if (!stream) return p;
  if (!send && !recv && canLocate) {
    // Nothing to move here, but the stream's order must still hold (and the other ranks may have buffers).
    p.device = true;
    p.gpu = api.currentDevice();
    return p;
  }
  std::string why = "the buffers are host memory";
  if (!canLocate) {
    why += std::string(" (no device memory can be used: the ") + api.name() +
           " device API is unavailable in this build or on this machine; CHORUS_DEVICE_EMULATION=1 emulates one)";
  }
  chorus::throwInvalidArgument(whereOf(comm, call) + "a non-NULL stream needs device buffers, but " + why +
                               "; pass NULL as the stream for host buffers");
}

// Runs a call on host buffers, or enqueues it on the stream for device buffers; inside a group, records it.
chorusResult_t submitCall(const char* call, chorusComm_t comm, const chorus::CallArgs& op, const void* sendUsed,
                          const void* recvUsed, chorusStream_t stream) {
  return guarded(comm, call, [&] {
    const std::shared_ptr<chorus::api::HostStream> host = chorus::api::hostStreamOf(stream, call);
    const Placement p = placeBuffers(call, comm, sendUsed, recvUsed, host ? nullptr : stream);
    if (host && p.device) {
      chorus::throwInvalidArgument(whereOf(comm, call) + "device buffers need a CUDA stream, not a host stream");
    }
    if (chorus::api::inGroup()) {
      chorus::api::recordInGroup(comm, op, p.device, p.gpu, stream);
    } else if (host) {
      const chorus::api::StreamStatus queued = host->enqueue(*comm->impl, std::span<const chorus::CallArgs>(&op, 1));
      if (queued.code != chorusSuccess) throw Error(queued.code, queued.message);
    } else if (p.device) {
      comm->impl->enqueueDevice(op, stream, p.gpu);
    } else {
      comm->impl->run(op);
    }
  });
}

// Makes the communicator: the config resolved first (a bad field fails before any traffic), then the launch spec;
// a failure of a named communicator says its name.
// makeSpec(resolved config, &store) may hand over a store server this process serves for the communicator.
template <class MakeSpec>
chorusResult_t initWith(const char* call, chorusComm_t* comm, const chorusConfig_t* config, MakeSpec makeSpec) {
  return guarded(nullptr, call, [&] {
    chorus::CommConfig resolved = chorus::resolveConfig(config, call);
    const std::string name = resolved.commName;
    try {
      auto h = std::make_unique<chorusComm>();
      std::shared_ptr<chorus::StoreServer> store;
      const chorus::LaunchSpec spec = makeSpec(resolved, &store);
      h->impl = std::make_unique<chorus::CommEngine>(spec, std::move(resolved), std::move(store));
      *comm = h.release();
    } catch (const Error& e) {
      throw e.withMessage(chorus::withCommName(name, e.what()));
    }
  });
}

chorusResult_t initRank(const char* call, chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank,
                        const chorusConfig_t* config) {
  if (!comm) return fail(nullptr, chorusInvalidArgument, std::string(call) + ": comm is NULL");
  *comm = nullptr;
  if (nranks < 1) {
    return fail(nullptr, chorusInvalidArgument, std::string(call) + ": nranks " + std::to_string(nranks) + " < 1");
  }
  if (rank < 0 || rank >= nranks) {
    return fail(nullptr, chorusInvalidArgument,
                std::string(call) + ": rank " + std::to_string(rank) + " is outside [0, " + std::to_string(nranks) + ")");
  }
  return initWith(call, comm, config, [&](const chorus::CommConfig&, std::shared_ptr<chorus::StoreServer>*) {
    return chorus::decodeUniqueId(commId, rank, nranks);
  });
}

chorusResult_t initFromEnv(const char* call, chorusComm_t* comm, const chorusConfig_t* config) {
  if (!comm) return fail(nullptr, chorusInvalidArgument, std::string(call) + ": comm is NULL");
  *comm = nullptr;
  return initWith(call, comm, config, [](const chorus::CommConfig& c, std::shared_ptr<chorus::StoreServer>* store) {
    chorus::LaunchSpec spec = chorus::launchSpecFromEnv();
    if (spec.storeThroughPmix || spec.nranks == 0) *store = chorus::completeThroughPmix(&spec, c.timeoutSeconds);
    return spec;
  });
}

std::mutex serversMutex;
// GetUniqueId's stores, one per process (each id names its own namespace in it); they live as long as the process.
// Without CHORUS_SECRET the ids carry a secret of their own, so that only holders of an id get in.
// It listens on the wildcard of the family of the address the ids name (`bindHost`: "0.0.0.0" or "::").
chorus::StoreServer* processStore(const char* bindHost, std::string* jobId, std::string* carriedSecret) {
  static std::unique_ptr<chorus::StoreServer> server;
  static std::string job, secret;
  std::lock_guard<std::mutex> g(serversMutex);
  if (!server) {
    job = chorus::randomHex(16);
    secret = chorus::newUniqueIdSecret();
    server =
        std::make_unique<chorus::StoreServer>(bindHost, 0, job, secret.empty() ? chorus::params::secret() : secret);
  }
  *jobId = job;
  *carriedSecret = secret;
  return server.get();
}

}  // namespace

extern "C" {

chorusResult_t chorusGetVersion(int* version) {
  if (!version) return fail(nullptr, chorusInvalidArgument, "chorusGetVersion: version is NULL");
  *version = CHORUS_VERSION_CODE;
  return chorusSuccess;
}

chorusResult_t chorusGetUniqueId(chorusUniqueId* uniqueId) {
  if (!uniqueId) return fail(nullptr, chorusInvalidArgument, "chorusGetUniqueId: uniqueId is NULL");
  return guarded(nullptr, "chorusGetUniqueId", [&] {
    std::string job, secret;
    const chorus::NetworkInterface nic =
        chorus::chooseNetworkInterface(chorus::params::socketIfname(), chorus::env_config::socketFamily());
    chorus::StoreServer* server = processStore(chorus::familyOf(nic) == AF_INET6 ? "::" : "0.0.0.0", &job, &secret);
    *uniqueId = chorus::encodeUniqueId(nic.address, server->port(), job, chorus::randomHex(8), secret);
  });
}

chorusResult_t chorusCommInitRank(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank) {
  return initRank("chorusCommInitRank", comm, nranks, commId, rank, nullptr);
}

chorusResult_t chorusCommInitRankConfig(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank,
                                        chorusConfig_t* config) {
  return initRank("chorusCommInitRankConfig", comm, nranks, commId, rank, config);
}

chorusResult_t chorusCommInitFromEnv(chorusComm_t* comm) {
  return initFromEnv("chorusCommInitFromEnv", comm, nullptr);
}

chorusResult_t chorusCommInitFromEnvConfig(chorusComm_t* comm, chorusConfig_t* config) {
  return initFromEnv("chorusCommInitFromEnvConfig", comm, config);
}

chorusResult_t chorusCommDestroy(chorusComm_t comm) {
  if (!comm) return chorusSuccess;
  if (comm->impl) comm->impl->waitIdle();
  delete comm;
  return chorusSuccess;
}

chorusResult_t chorusCommAbort(chorusComm_t comm) {
  if (!comm) return chorusSuccess;
  if (comm->impl) {
    comm->impl->requestAbort();
    comm->impl->waitIdle();
  }
  delete comm;
  return chorusSuccess;
}

chorusResult_t chorusCommCount(const chorusComm_t comm, int* count) {
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, "chorusCommCount: comm is NULL");
  if (!count) return fail(comm, chorusInvalidArgument, "chorusCommCount: count is NULL");
  *count = comm->impl->size();
  return chorusSuccess;
}

chorusResult_t chorusCommRegister(const chorusComm_t comm, void* buff, size_t size, void** handle) {
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, "chorusCommRegister: comm is NULL");
  if (!handle) return fail(comm, chorusInvalidArgument, "chorusCommRegister: handle is NULL");
  if (!buff || size == 0) {
    return fail(comm, chorusInvalidArgument, "chorusCommRegister: an empty range (buff NULL or size 0)");
  }
  *handle = nullptr;
  return guarded(comm, "chorusCommRegister", [&] { *handle = comm->impl->registerBuffer(buff, size); });
}

chorusResult_t chorusCommDeregister(const chorusComm_t comm, void* handle) {
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, "chorusCommDeregister: comm is NULL");
  if (!handle) return fail(comm, chorusInvalidArgument, "chorusCommDeregister: handle is NULL");
  return guarded(comm, "chorusCommDeregister", [&] { comm->impl->deregisterBuffer(handle); });
}

chorusResult_t chorusCommUserRank(const chorusComm_t comm, int* rank) {
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, "chorusCommUserRank: comm is NULL");
  if (!rank) return fail(comm, chorusInvalidArgument, "chorusCommUserRank: rank is NULL");
  *rank = comm->impl->rank();
  return chorusSuccess;
}

chorusResult_t chorusCommGetAsyncError(chorusComm_t comm, chorusResult_t* asyncError) {
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, "chorusCommGetAsyncError: comm is NULL");
  if (!asyncError) return fail(comm, chorusInvalidArgument, "chorusCommGetAsyncError: asyncError is NULL");
  *asyncError = comm->impl->asyncError();
  return chorusSuccess;
}

const char* chorusGetErrorString(chorusResult_t result) {
  switch (result) {
    case chorusSuccess: return "no error";
    case chorusUnhandledCudaError: return "unhandled CUDA error";
    case chorusSystemError: return "system error";
    case chorusInternalError: return "internal error";
    case chorusInvalidArgument: return "invalid argument";
    case chorusInvalidUsage: return "invalid usage";
    case chorusRemoteError: return "remote error";
    case chorusInProgress: return "operation in progress";
    case chorusTimeout: return "timeout";
    default: return "unknown result code";
  }
}

const char* chorusGetLastError(chorusComm_t comm) {
  if (comm && comm->impl) return comm->impl->lastError();
  return chorus::api::threadLastError();
}

size_t chorusTypeSize(chorusDataType_t datatype) { return chorus::typeSize(datatype); }
const char* chorusTypeName(chorusDataType_t datatype) { return chorus::typeName(datatype); }
const char* chorusOpName(chorusRedOp_t op) { return chorus::opName(op); }

chorusResult_t chorusAllReduce(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                               chorusRedOp_t op, chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusAllReduce";
  std::string bad = checkCommon(call, comm, datatype, op, true);
  size_t bytes = 0;
  if (bad.empty() && !bytesFor(count, datatype, 1, &bytes)) bad = whereOf(comm, call) + "count overflows";
  if (bad.empty() && count > 0 && (!sendbuff || !recvbuff)) {
    bad = whereOf(comm, call) + (!sendbuff ? "sendbuff" : "recvbuff") + " is NULL with count " + std::to_string(count);
  }
  if (bad.empty() && sendbuff != recvbuff && overlaps(sendbuff, bytes, recvbuff, bytes)) {
    bad = whereOf(comm, call) + "sendbuff and recvbuff overlap without being equal (in place needs equal)";
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const chorus::CallArgs request{.collective = Collective::kAllReduce,
                                 .send = sendbuff,
                                 .recv = recvbuff,
                                 .count = count,
                                 .type = datatype,
                                 .reduction = op};
  return submitCall(call, comm, request, sendbuff, recvbuff, stream);
}

chorusResult_t chorusBroadcast(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                               int root, chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusBroadcast";
  std::string bad = checkCommon(call, comm, datatype, chorusSum, false);
  if (bad.empty()) bad = checkRooted(call, comm, root, count, datatype, sendbuff, recvbuff, true);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const void* sendUsed = comm->impl->rank() == root ? sendbuff : nullptr;  // read on the root only
  const chorus::CallArgs request{.collective = Collective::kBroadcast,
                                 .send = sendbuff,
                                 .recv = recvbuff,
                                 .count = count,
                                 .type = datatype,
                                 .root = root};
  return submitCall(call, comm, request, sendUsed, recvbuff, stream);
}

chorusResult_t chorusReduce(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                            chorusRedOp_t op, int root, chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusReduce";
  std::string bad = checkCommon(call, comm, datatype, op, true);
  if (bad.empty()) bad = checkRooted(call, comm, root, count, datatype, sendbuff, recvbuff, false);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const void* recvUsed = comm->impl->rank() == root ? recvbuff : nullptr;  // written on the root only
  const chorus::CallArgs request{.collective = Collective::kReduce,
                                 .send = sendbuff,
                                 .recv = recvbuff,
                                 .count = count,
                                 .type = datatype,
                                 .reduction = op,
                                 .root = root};
  return submitCall(call, comm, request, sendbuff, recvUsed, stream);
}

chorusResult_t chorusAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, chorusDataType_t datatype,
                               chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusAllGather";
  std::string bad = checkCommon(call, comm, datatype, chorusSum, false);
  if (bad.empty()) bad = checkBlocks(call, comm, sendcount, "sendcount", datatype, sendbuff, recvbuff, true);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const chorus::CallArgs request{
      .collective = Collective::kAllGather, .send = sendbuff, .recv = recvbuff, .count = sendcount, .type = datatype};
  return submitCall(call, comm, request, sendbuff, recvbuff, stream);
}

chorusResult_t chorusReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, chorusDataType_t datatype,
                                   chorusRedOp_t op, chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusReduceScatter";
  std::string bad = checkCommon(call, comm, datatype, op, true);
  if (bad.empty()) bad = checkBlocks(call, comm, recvcount, "recvcount", datatype, sendbuff, recvbuff, false);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const chorus::CallArgs request{.collective = Collective::kReduceScatter,
                                 .send = sendbuff,
                                 .recv = recvbuff,
                                 .count = recvcount,
                                 .type = datatype,
                                 .reduction = op};
  return submitCall(call, comm, request, sendbuff, recvbuff, stream);
}

chorusResult_t chorusGroupStart(void) { return chorus::api::groupStart(); }
chorusResult_t chorusGroupEnd(void) { return chorus::api::groupEnd(); }

chorusResult_t chorusSend(const void* sendbuff, size_t count, chorusDataType_t datatype, int peer, chorusComm_t comm,
                          chorusStream_t stream) {
  return pointToPoint("chorusSend", chorus::Collective::kSend, const_cast<void*>(sendbuff), count, datatype, peer, comm,
                      stream);
}

chorusResult_t chorusRecv(void* recvbuff, size_t count, chorusDataType_t datatype, int peer, chorusComm_t comm,
                          chorusStream_t stream) {
  return pointToPoint("chorusRecv", chorus::Collective::kRecv, recvbuff, count, datatype, peer, comm, stream);
}

chorusResult_t chorusRecvAny(void* recvbuff, size_t count, chorusDataType_t datatype, int* source, chorusComm_t comm,
                             chorusStream_t stream) {
  return pointToPoint("chorusRecvAny", Collective::kRecv, recvbuff, count, datatype, chorus::kAnyPeer, comm, stream,
                      source);
}

chorusResult_t chorusAllToAll(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                              chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusAllToAll";
  std::string bad = checkCommon(call, comm, datatype, chorusSum, false);
  size_t total = 0;
  if (bad.empty() && !bytesFor(count, datatype, static_cast<size_t>(comm->impl->size()), &total)) {
    bad = whereOf(comm, call) + "count overflows";
  }
  if (bad.empty() && count > 0 && (!sendbuff || !recvbuff)) {
    bad = whereOf(comm, call) + (!sendbuff ? "sendbuff" : "recvbuff") + " is NULL with count " + std::to_string(count);
  }
  if (bad.empty() && overlaps(sendbuff, total, recvbuff, total)) {
    bad = whereOf(comm, call) + "sendbuff and recvbuff overlap (alltoall runs out of place only)";
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const chorus::CallArgs request{
      .collective = Collective::kAllToAll, .send = sendbuff, .recv = recvbuff, .count = count, .type = datatype};
  return submitCall(call, comm, request, sendbuff, recvbuff, stream);
}

chorusResult_t chorusAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                               void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                               chorusDataType_t datatype, chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusAllToAllv";
  std::string bad = checkCommon(call, comm, datatype, chorusSum, false);
  if (bad.empty() && (!sendcounts || !sdispls || !recvcounts || !rdispls)) {
    bad = whereOf(comm, call) + (!sendcounts ? "sendcounts" : !sdispls ? "sdispls" : !recvcounts ? "recvcounts"
                                                                                                 : "rdispls") +
          " is NULL";
  }
  size_t sendExtent = 0, recvExtent = 0;
  if (bad.empty()) bad = checkVectors(call, comm, datatype, sendcounts, sdispls, "send", &sendExtent);
  if (bad.empty()) bad = checkVectors(call, comm, datatype, recvcounts, rdispls, "recv", &recvExtent);
  if (bad.empty() && ((sendExtent > 0 && !sendbuff) || (recvExtent > 0 && !recvbuff))) {
    bad = whereOf(comm, call) + (sendExtent > 0 && !sendbuff ? "sendbuff" : "recvbuff") +
          " is NULL while its counts are not all 0";
  }
  if (bad.empty() && overlaps(sendbuff, sendExtent, recvbuff, recvExtent)) {
    bad = whereOf(comm, call) + "sendbuff and recvbuff overlap (alltoallv runs out of place only)";
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  // The arrays are copied: a group's call, or a device call, runs after this one returns.
  const size_t n = static_cast<size_t>(comm->impl->size());
  auto vectors = std::make_shared<std::vector<size_t>>();
  for (const size_t* a : {sendcounts, sdispls, recvcounts, rdispls}) vectors->insert(vectors->end(), a, a + n);
  const size_t* v = vectors->data();
  chorus::CallArgs request{.collective = Collective::kAllToAllv,
                           .send = sendbuff,
                           .recv = recvbuff,
                           .type = datatype,
                           .sendCounts = v,
                           .sendDispls = v + n,
                           .recvCounts = v + 2 * n,
                           .recvDispls = v + 3 * n};
  request.keepAlive = vectors;
  return submitCall(call, comm, request, sendExtent > 0 ? sendbuff : nullptr, recvExtent > 0 ? recvbuff : nullptr,
                    stream);
}

chorusResult_t chorusGather(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype, int root,
                            chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusGather";
  std::string bad = checkCommon(call, comm, datatype, chorusSum, false);
  if (bad.empty()) bad = checkRootedBlocks(call, comm, root, count, datatype, sendbuff, recvbuff, true);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const void* recvUsed = comm->impl->rank() == root ? recvbuff : nullptr;  // written on the root only
  const chorus::CallArgs request{.collective = Collective::kGather,
                                 .send = sendbuff,
                                 .recv = recvbuff,
                                 .count = count,
                                 .type = datatype,
                                 .root = root};
  return submitCall(call, comm, request, count > 0 ? sendbuff : nullptr, count > 0 ? recvUsed : nullptr, stream);
}

chorusResult_t chorusScatter(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype, int root,
                             chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusScatter";
  std::string bad = checkCommon(call, comm, datatype, chorusSum, false);
  if (bad.empty()) bad = checkRootedBlocks(call, comm, root, count, datatype, sendbuff, recvbuff, false);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  const void* sendUsed = comm->impl->rank() == root ? sendbuff : nullptr;  // read on the root only
  const chorus::CallArgs request{.collective = Collective::kScatter,
                                 .send = sendbuff,
                                 .recv = recvbuff,
                                 .count = count,
                                 .type = datatype,
                                 .root = root};
  return submitCall(call, comm, request, count > 0 ? sendUsed : nullptr, count > 0 ? recvbuff : nullptr, stream);
}

chorusResult_t chorusBarrier(chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusBarrier";
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, std::string(call) + ": comm is NULL");
  const chorus::CallArgs request{.collective = Collective::kBarrier, .count = 0, .type = chorusUint8};
  return submitCall(call, comm, request, nullptr, nullptr, stream);
}

chorusResult_t chorusCommSplit(chorusComm_t comm, int color, int key, chorusComm_t* newcomm, chorusConfig_t* config) {
  const char* call = "chorusCommSplit";
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, std::string(call) + ": comm is NULL");
  if (!newcomm) return fail(comm, chorusInvalidArgument, whereOf(comm, call) + "newcomm is NULL");
  *newcomm = nullptr;
  if (color < 0 && color != CHORUS_SPLIT_NOCOLOR) {
    return fail(comm, chorusInvalidArgument,
                whereOf(comm, call) + "color " + std::to_string(color) + " is negative (CHORUS_SPLIT_NOCOLOR is -1)");
  }
  if (chorus::api::inGroup()) {
    return fail(comm, chorusInvalidUsage, whereOf(comm, call) + "inside a group (a split runs at once)");
  }
  chorus::CommEngine& parent = *comm->impl;
  return guarded(comm, call, [&] {
    // Resolved first: a bad field fails every rank alike, before any traffic.
    chorus::CommConfig resolved = chorus::resolveConfig(config, call, &parent.config());
    // Every rank's (color, key), through the parent.
    const int n = parent.size();
    std::vector<int32_t> mine = {color, key}, all(2 * static_cast<size_t>(n));
    parent.run(chorus::CallArgs{.collective = Collective::kAllGather,
                                .send = mine.data(),
                                .recv = all.data(),
                                .count = 2,
                                .type = chorusInt32});
    const uint64_t split = parent.nextSplit();
    if (color != CHORUS_SPLIT_NOCOLOR) {
      std::vector<int> members;
      for (int r = 0; r < n; ++r) {
        if (all[2 * static_cast<size_t>(r)] == color) members.push_back(r);
      }
      // By key, then by rank in the parent (stable).
      std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
        return all[2 * static_cast<size_t>(a) + 1] < all[2 * static_cast<size_t>(b) + 1];
      });
      auto h = std::make_unique<chorusComm>();
      h->impl = parent.makeChild(members, color, split, std::move(resolved));
      *newcomm = h.release();
    }
    // No rank leaves (and may destroy the parent, whose store the children meet in) before every child is made.
    parent.run(chorus::CallArgs{.collective = Collective::kBarrier, .type = chorusUint8});
  });
}

}  // extern "C"
