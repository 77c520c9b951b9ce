#include "src/comm/comm_engine.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <filesystem>
#include <map>
#include <sstream>
#include <system_error>

#include "reduce/reducer.h"
#include "src/comm/call_description.h"
#include "src/comm/clock_offset.h"
#include "src/comm/mismatch_report.h"
#include "src/comm/point_to_point.h"
#include "src/comm/shrink_agreement.h"
#include "src/comm/tensor_fusion.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/comm_config.h"
#include "core/params.h"
#include "device/poll_backoff.h"
#include "topology/host_identity.h"
#include "src/comm/link_probe.h"
#include "topology/local_host.h"
#include "topology/rank_placement.h"
#include "topology/topology_description.h"
#include "transports/reserved_tags.h"
#include "transports/family_connection.h"
#include "transports/transport_registry.h"

namespace chorus {
namespace {

// The physical machine a rank runs on (emulated hosts of one machine share it: its cores and its clock).
std::string machineOf(const PeerCard& c) {
  auto it = c.entries.find("machine");
  return it == c.entries.end() ? c.hostId : it->second;
}

}  // namespace

CommEngine::CommEngine(const LaunchSpec& spec, CommConfig config, std::shared_ptr<StoreServer> sharedStore)
    : config_(std::move(config)), rank_(spec.rank), size_(spec.nranks), spec_(spec),
      storeServer_(std::move(sharedStore)) {
  spec_.serveStore = false;
  CommLogScope logScope(config_.commName);
  params::logSetKnobs(rank_);
  // Chosen once, like every knob: a communicator never switches between the emulation and CUDA.
  deviceApi_ = &chorus::deviceApi();
  (void)deviceApi_->available();  // probes the driver now (once per process) rather than in the first call
  timeoutSeconds_ = config_.timeoutSeconds;
  CallPlanner::checkSettings(config_);  // a bad algorithm string fails before any network traffic
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeFd_ < 0) throwSystemError(errorContext(rank_, "init"), "eventfd", errno);
  const Deadline deadline = Deadline::after(timeoutSeconds_);
  try {
    cards_ = connect(spec, deadline);
    staging_ = std::make_shared<StagingMemory>(4, CallPlanner::largestSlice(config_), 64 << 10);
  } catch (...) {
    close(wakeFd_);
    throw;
  }
  finishSetup(deadline);
  CHORUS_INFO(rank_, "communicator ready: " << size_ << " ranks, job " << spec.jobId << ", store "
                                            << spec.storeHost << ":" << spec.storePort << " (" << spec.source << ")");
}

CommEngine::CommEngine(SharingParent, CommEngine& parent, const std::vector<int>& members, const LaunchSpec& spec,
                       CommConfig config)
    : config_(std::move(config)), rank_(spec.rank), size_(spec.nranks), spec_(spec),
      storeServer_(parent.storeServer_) {
  CommLogScope logScope(config_.commName);
  identity_ = spec.jobId + "/" + spec.keyPrefix;
  deviceApi_ = parent.deviceApi_;
  timeoutSeconds_ = config_.timeoutSeconds;
  CallPlanner::checkSettings(config_);
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeFd_ < 0) throwSystemError(errorContext(rank_, "split"), "eventfd", errno);
  const Deadline deadline = Deadline::after(timeoutSeconds_);
  try {
    store_ = parent.store_;
    // No card to trade (the parent's serve), but one kept while this process lives, for a shrink of this child.
    store_->setOwned(cardKey(spec.keyPrefix, rank_), {}, deadline);
    callMutex_ = parent.callMutex_;
    hostOrder_ = parent.hostOrder_;
    {
      // The parent's connections become shared: no call may be using them meanwhile.
      std::lock_guard<std::mutex> lock(*callMutex_);
      conns_.resize(size_);
      peerTransports_.assign(size_, TransportId::kShm);
      sameMachine_.assign(size_, false);
      for (int q = 0; q < size_; ++q) {
        const int p = members[q];
        sameMachine_[q] = parent.sameMachine_[p];
        if (q == rank_) continue;
        conns_[q] = std::make_unique<FamilyConnection>(FamilyConnection::share(parent.conns_[p]));
        peerTransports_[q] = parent.peerTransports_[p];
      }
      sameHostMedium_ = parent.sameHostMedium_;
    }
    localRanks_ = static_cast<int>(std::count(sameMachine_.begin(), sameMachine_.end(), true));
    for (int q = 0; q < size_; ++q) {
      PeerCard card = parent.cards_[members[q]];
      card.rank = q;
      cards_.push_back(std::move(card));
    }
    if (config_.checkMismatch) mismatchReport_ = std::make_unique<MismatchReport>(*store_, spec.keyPrefix, rank_, size_);
    // Salted with the identity: a frame of another communicator of the family on a shared connection never passes
    // for one of this one's.
    callTags_ = std::make_unique<CallTags>(size_, config_.checkMismatch, std::hash<std::string>{}(identity_));
    staging_ = CallPlanner::largestSlice(config_) <= parent.staging_->sliceBytes()
                   ? parent.staging_
                   : std::make_shared<StagingMemory>(4, CallPlanner::largestSlice(config_), 64 << 10);
  } catch (...) {
    close(wakeFd_);
    throw;
  }
  finishSetup(deadline);
  CHORUS_INFO(rank_, "communicator ready: " << size_ << " ranks, split from " << parent.identity_
                                            << ", sharing its connections");
}

void CommEngine::finishSetup(Deadline deadline) {
  try {
    // Oversubscribed hosts (more ranks than cores) must not spin: the peer they wait for needs the core.
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    // Oversubscribed, yielding (as Open MPI's yield_when_idle does) lets the peer run at once; sleeping in poll
    // would add a doorbell and a wakeup to every step.
    const bool oversubscribed = localRanks_ > cores;
    spinRounds_ = oversubscribed ? 2 : 200;
    yieldRounds_ = oversubscribed ? kOversubscribedYields : kYields;
    io_ = std::make_unique<CommIO>(rank_, size_, conns_, *staging_, hostReducer(), spinRounds_, yieldRounds_,
                                   failures_.abortFlag(), wakeFd_);
    io_->setHierarchy(&hierarchy_);
    configureWireCompression();
    learnTopology(cards_, deadline);
    startTrace(deadline);
    planCalls(sameHostMedium_ == TransportMedium::kNetwork);
    loadAutotuneFile(deadline);
  } catch (...) {
    close(wakeFd_);
    throw;
  }
}

namespace {
// What chorusCommRegister hands out: each registering connection's token for the range.
struct BufferRegistration {
  std::vector<std::pair<MemoryRegistration*, void*>> tokens;
};
}  // namespace

void* CommEngine::registerBuffer(const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(*callMutex_);
  auto reg = std::make_unique<BufferRegistration>();
  try {
    for (auto& c : conns_) {
      MemoryRegistration* registration = c ? c->capabilities().registration : nullptr;
      if (registration == nullptr) continue;
      if (void* token = registration->registerMemory(p, bytes)) reg->tokens.emplace_back(registration, token);
    }
  } catch (...) {
    for (auto& [registration, token] : reg->tokens) registration->deregisterMemory(token);
    throw;
  }
  return reg.release();
}

void CommEngine::deregisterBuffer(void* handle) {
  std::lock_guard<std::mutex> lock(*callMutex_);
  std::unique_ptr<BufferRegistration> reg(static_cast<BufferRegistration*>(handle));
  for (auto& [registration, token] : reg->tokens) registration->deregisterMemory(token);
}

bool CommEngine::canShareWith(const CommConfig& c) const {
  return config_.splitShare && c.splitShare && c.transports == config_.transports &&
         c.socketsPerPeer == config_.socketsPerPeer && c.shmBufferBytes == config_.shmBufferBytes &&
         c.shmCma == config_.shmCma && c.socketIfname == config_.socketIfname && c.ibEmulation == config_.ibEmulation &&
         c.ibHca == config_.ibHca && c.ibGidIndex == config_.ibGidIndex && c.ibTimeout == config_.ibTimeout &&
         c.ibRetryCnt == config_.ibRetryCnt && c.ibDisable == config_.ibDisable &&
         c.ibQpsPerPeer == config_.ibQpsPerPeer && c.encrypt == config_.encrypt;
}

CommEngine::~CommEngine() {
  CommLogScope logScope(config_.commName);
  // Device calls still queued run (or fail, after an abort) first: their streams wait for them.
  shutDownDevice();
  flushTrace();
  writeAutotuneFile();
  // After an abort the peers must hear that we gave up, not a goodbye: they may be blocked in a call with us.
  for (auto& c : conns_) {
    if (!c) continue;
    if (failures_.unusable()) {
      c->abandon();
    } else {
      c->closeGracefully();
    }
  }
  conns_.clear();
  if (wakeFd_ >= 0) close(wakeFd_);
}

std::vector<PeerCard> CommEngine::connect(const LaunchSpec& spec, Deadline deadline) {
  const std::string who = errorContext(rank_, "connect (" + std::to_string(size_) + " ranks)");
  // The secret comes from CHORUS_SECRET or the unique id (launch_spec.h): the store and every connection check it.
  if (spec.serveStore) storeServer_ = std::make_shared<StoreServer>("0.0.0.0", spec.storePort, spec.jobId, spec.secret);
  store_ = std::make_shared<StoreClient>(spec.storeHost, spec.storePort, spec.jobId, spec.secret, rank_, deadline);
  const std::string& pre = spec.keyPrefix;
  identity_ = spec.jobId + "/" + pre;
  auto transports = makeTransports(rank_, config_, spec.jobId + "/" + pre, spec.secret);

  PeerCard self;
  self.rank = rank_;
  self.pid = static_cast<int>(getpid());
  self.hostId = hostIdentity();
  self.entries["machine"] = machineIdentity();
  addPlacement(self, localHostTopology());
  for (auto& t : transports) t.transport->describeSelf(self);
  // The network's link class follows the transport that carries it, not whether hwloc saw an RDMA NIC.
  self.entries["topo.rdma"] = networkIsRdma(self) ? "1" : "0";
  if (!config_.traceDir.empty()) self.entries["trace"] = "1";  // its clock's offset to rank 0's is wanted
  // Owned: the card stays in the store while this process lives, which is how a shrink tells the dead
  // (shrink_agreement.h).
  store_->setOwned(cardKey(pre, rank_), self.encode(), deadline);
  std::vector<PeerCard> cards(size_);
  cards[rank_] = self;
  for (int p = 0; p < size_; ++p) {
    if (p != rank_) cards[p] = PeerCard::decode(store_->get(cardKey(pre, p), deadline), p);
  }
  // Ranks sharing this machine's cores: emulated hosts (CHORUS_HOST_ID) on one machine share them too.
  localRanks_ = static_cast<int>(
      std::count_if(cards.begin(), cards.end(), [&](const PeerCard& c) { return machineOf(c) == machineOf(self); }));
  sameMachine_.assign(size_, false);
  for (int p = 0; p < size_; ++p) sameMachine_[p] = machineOf(cards[p]) == machineOf(self);
  // Each pair takes the first transport in probe order that both ends can use.
  std::vector<std::vector<PeerCard>> groups(transports.size());
  peerTransports_.assign(size_, TransportId::kShm);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    size_t chosen = transports.size();
    for (size_t t = 0; t < transports.size() && chosen == transports.size(); ++t) {
      if (transports[t].transport->canConnect(self, cards[p])) chosen = t;
    }
    if (chosen == transports.size()) {
      throw Error(chorusInvalidUsage, who + ": no transport can reach rank " + std::to_string(p) +
                                          " (transports '" + config_.transports + "')");
    }
    groups[chosen].push_back(cards[p]);
    peerTransports_[p] = transports[chosen].record->id;
  }
  sameHostMedium_ = sameHostMedium(cards, transports);
  conns_.resize(size_);
  // In probe order on every rank: each transport's connectAll waits for its peers to be inside the same one.
  for (size_t t = 0; t < transports.size(); ++t) {
    if (groups[t].empty()) continue;
    for (auto& c : transports[t].transport->connectAll(self, groups[t], deadline)) {
      CHORUS_INFO(rank_, "peer " << c->peer() << " via " << c->describe());
      int p = c->peer();
      conns_[p] = std::move(c);
    }
  }
  // Everyone has read every card before anyone may tear the store down (rank 0 serves it in env mode).
  store_->barrier(pre + "ready", size_, deadline);
  if (config_.checkMismatch) {
    mismatchReport_ = std::make_unique<MismatchReport>(*store_, pre, rank_, size_);
  }
  // checkMismatch off: frames carry no call identity, sizes are still checked.
  callTags_ = std::make_unique<CallTags>(size_, config_.checkMismatch);
  return cards;
}

TransportMedium CommEngine::sameHostMedium(const std::vector<PeerCard>& cards,
                                           const std::vector<ChosenTransport>& transports) {
  std::map<std::string, int> firstOfHost;
  for (const PeerCard& c : cards) {
    auto [it, isFirst] = firstOfHost.emplace(c.hostId, c.rank);
    if (isFirst || it->second < 0) continue;
    const PeerCard& a = cards[static_cast<size_t>(it->second)];
    it->second = -1;  // one pair per host
    for (const ChosenTransport& t : transports) {
      if (t.transport->canConnect(a, c)) {
        if (t.record->medium == TransportMedium::kNetwork) return TransportMedium::kNetwork;
        break;
      }
    }
  }
  return TransportMedium::kSharedMemory;
}

void CommEngine::learnTopology(const std::vector<PeerCard>& cards, Deadline deadline) {
  std::vector<RankPlacement> placements;
  for (const PeerCard& c : cards) placements.push_back(placementFromCard(c));
  world_ = std::make_unique<GlobalTopology>(std::move(placements));
  links_ = linkModelOf(localHostTopology());
  if (config_.topoProbe) {
    io_->beginUntracked(reserved_tags::kLinkProbe, LazyDeadline::at(deadline));
    links_ = probeLinkModel(*io_, *world_, links_);
  }
  logTopology(rank_, localHostTopology(), *world_, links_);
  hierarchy_.hosts.clear();
  for (int h = 0; h < world_->nhosts(); ++h) hierarchy_.hosts.push_back(world_->ranksOnHost(h));
}

void CommEngine::startTrace(Deadline deadline) {
  // Every rank works the list out alike from the cards, whether it traces or not: rank 0 answers the others.
  std::vector<int> measured;
  for (int p = 1; p < size_; ++p) {
    if (cards_[p].entries.count("trace") != 0 && machineOf(cards_[p]) != machineOf(cards_[0])) measured.push_back(p);
  }
  double offsetUs = 0;
  if (!measured.empty()) {
    io_->beginUntracked(reserved_tags::kClockOffset, LazyDeadline::at(deadline));
    offsetUs = measureClockOffsetUs(*io_, measured, &CallTrace::nowUs);
  }
  if (config_.traceDir.empty()) return;
  std::error_code failed;
  std::filesystem::create_directories(config_.traceDir, failed);
  if (failed) {
    throw Error(chorusInvalidArgument, named(errorContext(rank_, "trace directory " + config_.traceDir) +
                                             " (CHORUS_TRACE): " + failed.message()));
  }
  const TraceLevel level = config_.traceLevel == 1 ? TraceLevel::kTransfer : TraceLevel::kCall;
  trace_ = std::make_unique<CallTrace>(traceFilePath(config_.traceDir, rank_, spec_.keyPrefix), level, rank_, size_,
                                       config_.commName);
  trace_->setClockOffsetUs(offsetUs);
  std::vector<const char*> names(size_, "");
  for (int p = 0; p < size_; ++p) {
    if (p != rank_ && conns_[p]) names[p] = transportRecord(peerTransports_[p]).name;
  }
  io_->setTrace(trace_.get(), std::move(names));
}

void CommEngine::flushTrace() noexcept {
  if (!trace_) return;
  try {
    trace_->flush();
  } catch (const std::exception& e) {
    CHORUS_WARN(rank_, "trace not written: " << e.what());
  }
}

void CommEngine::planCalls(bool sameHostOverNetwork) {
  PlannerWorld w{*world_, links_};
  w.sameHostOverNetwork = sameHostOverNetwork;
  w.localRanks = localRanks_;
  for (const auto& c : conns_) {
    const StripedSends* striping = c ? c->capabilities().striping : nullptr;
    if (striping != nullptr) w.maxSockets = std::max(w.maxSockets, static_cast<int>(striping->maxStripeWidth()));
  }
  planner_ = std::make_unique<CallPlanner>(rank_, config_, w);
  hierarchy_.chooseFlat = [this](const Op& op, int groupSize, bool acrossHosts) {
    return planner_->levelAlgorithm(op, groupSize, acrossHosts);
  };
  if (logLevel() >= LogLevel::kInfo && rank_ == 0) {
    std::ostringstream table;
    planner_->table().print(table);
    const CostInputs& in = planner_->inputs();
    CHORUS_INFO(rank_, "selection for " << size_ << " ranks on " << in.nhosts << " host(s), up to "
                                        << in.maxRanksPerHost << " per host:\n" << table.str()
                                        << "as CHORUS_ALGO: " << planner_->table().asRules());
  }
}

void CommEngine::runIssued(uint64_t number, std::span<const Op> ops, bool passTurn) {
  CallerCount inside(activeCallers_);
  hostOrder_->waitTurn(number, failures_.abortFlag());
  struct PassOn {
    HostCallOrder* order;
    uint64_t number;
    ~PassOn() {
      if (order) order->pass(number);
    }
  } passOn{passTurn ? hostOrder_.get() : nullptr, number};
  // Every rank makes its calls in the same order: a host call goes after the device calls enqueued before it.
  if (deviceQueue_) deviceQueue_->drain();
  execute(ops, [this]() -> CommIO& { return *io_; }, false);
}

void CommEngine::skipIssued(uint64_t number, bool passTurn) {
  CallerCount inside(activeCallers_);
  hostOrder_->waitTurn(number, failures_.abortFlag());
  if (passTurn) hostOrder_->pass(number);
}

void CommEngine::execute(std::span<const Op> requests, const std::function<CommIO&()>& prepare, bool deviceCall) {
  std::lock_guard<std::mutex> lock(*callMutex_);
  CommLogScope logScope(config_.commName);
  // A single call is numbered in a copy on the stack (no heap traffic per call); a batch in batch_.
  Op single;
  std::span<Op> ops;
  if (requests.size() == 1) {
    single = requests[0];
    ops = std::span<Op>(&single, 1);
  } else {
    batch_.assign(requests.begin(), requests.end());
    ops = batch_;
  }
  if (ops.empty()) return;
  for (Op& o : ops) o.seq = seq_++;
  const Op* current = &ops[0];  // the call that failed, for the messages
  try {
    const Op& op = *current;
    if (failures_.unusable()) failures_.refuse(errorContext(rank_, describeCall(op)));
    CommIO& io = prepare();
    for (Op& o : ops) {
      if (o.peer != kAnyPeer) continue;
      current = &o;
      // Which peer's message comes first decides the call: it runs alone (never in a group) on host memory.
      if (deviceCall || ops.size() != 1) {
        throw Error(chorusInvalidUsage, errorContext(rank_, describeCall(o)) +
                                            ": a receive from any rank runs alone, on host memory (not in a group, "
                                            "not on device buffers)");
      }
      io.begin(*callTags_, LazyDeadline::after(timeoutSeconds_), &o);
      o.peer = io.waitForAnySender(*callTags_, o.type);
      if (o.source) *o.source = o.peer;
    }
    pointToPoint_.clear();
    for (const Op& o : ops) {
      if (isPointToPoint(o.collective)) pointToPoint_.push_back(&o);
    }
    // Tracing (config traceDir): one event per call; with transfer tracing, CommIO's times of the call.
    CallTrace* const trace = deviceCall ? nullptr : trace_.get();
    const TransferTimes* times = trace && trace->level() == TraceLevel::kTransfer ? &io.times() : nullptr;
    if (!pointToPoint_.empty()) {
      current = pointToPoint_.front();
      CHORUS_TRACE(rank_, describeCall(*current) << " and " << pointToPoint_.size() - 1 << " more point-to-point");
      const double start = trace ? CallTrace::nowUs() : 0;
      runPointToPoint(io, *callTags_, pointToPoint_, LazyDeadline::after(timeoutSeconds_));
      lastAlgorithm_.store("", std::memory_order_relaxed);
      if (trace) {
        trace->recordCall(*current, nullptr, 0, start, CallTrace::nowUs(), times,
                          static_cast<int>(pointToPoint_.size()));
      }
    }
    auto runCollective = [&](const Op& o, int fused) {
      current = &o;
      const double start = trace ? CallTrace::nowUs() : 0;
      callTags_->begin(o);
      const CallPlan plan = planner_->plan(o, size_, deviceCall);
      CHORUS_TRACE(rank_, describeCall(o) << " via " << algorithmName(plan.algorithm));
      // Compressed calls whose ranks must agree run in place: every send then comes from memory the call may round.
      const Op& run = wireInPlace(o);
      io.begin(*callTags_, LazyDeadline::after(timeoutSeconds_), &run);
      io.setSliceBytes(plan.sliceBytes);
      io.setStripeWidth(plan.stripeWidth);
      const auto began = plan.trial ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      plan.run(io, run);
      if (io.wire().active()) agreeAfterWire(run);
      if (plan.trial) {
        planner_->recordTrial(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(),
                              [&](std::vector<double>& t) { agreeTimes(t, io); });
      }
      if (trace) {
        trace->recordCall(o, algorithmName(plan.algorithm), io.sliceBytes(), start, CallTrace::nowUs(), times, fused);
      }
      lastAlgorithm_.store(algorithmName(plan.algorithm), std::memory_order_relaxed);
    };
    if (pointToPoint_.size() == ops.size()) {
      // Sends and receives only: done.
    } else if (ops.size() == 1) {
      runCollective(ops[0], 1);
    } else {
      // A batch: its allreduces fused where they fit (host buffers only: the fusion buffer is host memory).
      const BatchPlan batch = planner_->planBatch(ops, deviceCall);
      const auto began = batch.trial ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      for (const std::vector<size_t>& entry : planFusion(ops, batch.fusionThreshold)) {
        if (entry.size() == 1) {
          runCollective(ops[entry.front()], 1);
          continue;
        }
        const int fused = static_cast<int>(entry.size());
        if (contiguous(ops, entry)) {
          fused_ = contiguousAllReduce(ops, entry);
          fused_.seq = ops[entry.front()].seq;
          runCollective(fused_, fused);
          continue;
        }
        size_t bytes = 0;
        for (size_t m : entry) bytes += ops[m].count * typeSize(ops[m].type);
        if (fusionBuffer_.size() < bytes) fusionBuffer_.resize(std::max(bytes, 2 * fusionBuffer_.size()));
        fused_ = fusedAllReduce(ops, entry, fusionBuffer_.data());
        fused_.seq = ops[entry.front()].seq;
        CHORUS_TRACE(rank_, entry.size() << " allreduces fused into " << bytes << " bytes");
        packFused(ops, entry, fusionBuffer_.data());
        runCollective(fused_, fused);
        unpackFused(ops, entry, fusionBuffer_.data());
      }
      if (batch.trial) {
        planner_->recordBatchTrial(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(),
                                   [&](std::vector<double>& t) { agreeTimes(t, io); });
      }
    }
  } catch (const Error& raw) {
    throw failCall(raw, *current, deviceCall);
  }
}

std::unique_ptr<CommEngine> CommEngine::makeChild(const std::vector<int>& members, int color, uint64_t split,
                                                  CommConfig config) {
  LaunchSpec child = spec_;
  child.nranks = static_cast<int>(members.size());
  child.rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
  child.keyPrefix = spec_.keyPrefix + "split" + std::to_string(split) + ".color" + std::to_string(color) + "/";
  child.source = spec_.source + ", split";
  if (canShareWith(config)) {
    return std::unique_ptr<CommEngine>(new CommEngine(SharingParent{}, *this, members, child, std::move(config)));
  }
  return std::make_unique<CommEngine>(child, std::move(config), storeServer_);
}

void CommEngine::requestAbort() {
  failures_.abort();
  hostOrder_->wakeAll();
  uint64_t one = 1;
  ssize_t ignored = write(wakeFd_, &one, sizeof(one));
  (void)ignored;
}

void CommEngine::waitIdle() {
  PollBackoff backoff;
  // Calls queued on host streams count too: their streams run them (or, after an abort, fail them) promptly.
  // Idle first: a stream passes its call's turn on while counted as a caller, so seeing the turn passed and then
  // no caller means the stream is done with this communicator.
  while (!hostOrder_->idle() || activeCallers_.load() > 0) backoff.pause();
  std::lock_guard<std::mutex> lock(*callMutex_);
}

bool CommEngine::callInProgress() {
  std::unique_lock<std::mutex> lock(*callMutex_, std::try_to_lock);
  return !lock.owns_lock();
}

std::string CommEngine::transportsInUse() const {
  std::string names;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || !conns_[p]) continue;
    const std::string name = transportRecord(peerTransports_[p]).name;
    if (("," + names + ",").find("," + name + ",") == std::string::npos) names += (names.empty() ? "" : ",") + name;
  }
  return names;
}

std::string CommEngine::named(const std::string& message) const { return withCommName(config_.commName, message); }

}  // namespace chorus
