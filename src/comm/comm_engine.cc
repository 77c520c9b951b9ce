#include "src/comm/comm_engine.h"

#include <algorithm>

#include "core/error.h"
#include "core/host_port.h"
#include "core/logging.h"
#include "core/params.h"
#include "device/poll_backoff.h"
#include "reduce/reducer.h"
#include "src/comm/autotune_file.h"
#include "src/comm/comm_setup.h"
#include "src/comm/shrink_agreement.h"

namespace chorus {

namespace {

// Host staging for calls of up to the largest slice this config can plan.
std::shared_ptr<StagingMemory> hostStaging(const CommConfig& config) {
  return std::make_shared<StagingMemory>(StagingMemory::kSlots, CallPlanner::largestSlice(config),
                                         StagingMemory::kFirstWorkspaceBytes);
}

}  // namespace

CommEngine::CommEngine(const LaunchSpec& spec, CommConfig config, std::shared_ptr<StoreServer> sharedStore)
    : config_(std::move(config)),
      rank_(spec.rank),
      size_(spec.nranks),
      family_(spec),
      flight_(config_.flightRecords, config_.flightDir, {config_.commName, family_.identity(), rank_, size_}),
      failures_(config_.commName),
      calls_(rank_, size_, config_, failures_),
      device_({config_, peers_, staging_, waitPolicy_, hierarchy_, failures_, calls_, order_}) {
  CommLogScope logScope(config_.commName);
  params::logSetKnobs(rank_);
  device_.useApi(chorus::deviceApi());
  (void)device_.api().available();  // probes the driver now (once per process) rather than in the first call
  CallPlanner::checkSettings(config_);  // a bad algorithm string fails before any network traffic
  failures_.openWakeDescriptor(errorContext(rank_, "init"));
  const Deadline deadline = Deadline::after(config_.timeoutSeconds);
  peers_ = PeerConnections::connect(spec, config_, std::move(sharedStore), deadline);
  if (config_.checkMismatch) failures_.listMismatchesThrough(peers_.store(), spec.keyPrefix, rank_, size_);
  staging_ = hostStaging(config_);
  finishSetup(deadline);
  CHORUS_INFO(rank_, "communicator ready: " << size_ << " ranks, job " << spec.jobId << ", store "
                                            << joinHostPort(spec.storeHost, spec.storePort) << " (" << spec.source
                                            << ")");
}

CommEngine::CommEngine(SharingParent, CommEngine& parent, const std::vector<int>& members, const LaunchSpec& spec,
                       CommConfig config)
    : config_(std::move(config)),
      rank_(spec.rank),
      size_(spec.nranks),
      family_(spec),
      flight_(config_.flightRecords, config_.flightDir, {config_.commName, family_.identity(), rank_, size_}),
      failures_(config_.commName),
      // Salted with the identity: a frame of another communicator of the family on a shared connection never passes
      // for one of this one's.
      calls_(rank_, size_, config_, failures_, std::hash<std::string>{}(family_.identity())),
      device_({config_, peers_, staging_, waitPolicy_, hierarchy_, failures_, calls_, order_}) {
  CommLogScope logScope(config_.commName);
  device_.useApi(parent.device_.api());
  CallPlanner::checkSettings(config_);
  failures_.openWakeDescriptor(errorContext(rank_, "split"));
  const Deadline deadline = Deadline::after(config_.timeoutSeconds);
  order_ = parent.order_;
  peers_ = PeerConnections::share(parent.peers_, members, spec, *order_, deadline);
  if (config_.checkMismatch) failures_.listMismatchesThrough(peers_.store(), spec.keyPrefix, rank_, size_);
  staging_ = CallPlanner::largestSlice(config_) <= parent.staging_->sliceBytes() ? parent.staging_
                                                                                  : hostStaging(config_);
  finishSetup(deadline);
  CHORUS_INFO(rank_, "communicator ready: " << size_ << " ranks, split from " << parent.identity()
                                            << ", sharing its connections");
}

void CommEngine::finishSetup(Deadline deadline) {
  calls_.recordFlightIn(&flight_);
  flight_.publishCard(peers_.store(), deadline);
  failures_.watchHostConnections(&peers_.conns());
  waitPolicy_ = WaitPolicy::forRanksOnMachine(peers_.localRanks());
  io_ = std::make_unique<CommIO>(rank_, size_, peers_.conns(), *staging_, hostReducer(), waitPolicy_,
                                 failures_.state().abortFlag(), failures_.wakeDescriptor());
  io_->setHierarchy(&hierarchy_);
  calls_.compression().configure(config_.compression, peers_.transports(), *io_);
  const WorldView world = learnTopology(rank_, config_, peers_.cards(), *io_, deadline);
  hierarchy_.hosts = hostsOf(*world.topology);
  calls_.traceInto(startTrace(config_, family_.spec().keyPrefix, peers_, *io_, deadline));
  calls_.planWith(planCalls(rank_, config_, world, peers_));
  hierarchy_.chooseFlat = [this](const CallArgs& op, int groupSize, bool acrossHosts) {
    return calls_.planner()->levelAlgorithm(op, groupSize, acrossHosts);
  };
  loadAutotuneFile(*calls_.planner(), config_, peers_.store(), family_.spec().keyPrefix, rank_, deadline);
  startMetrics();
}

void CommEngine::startMetrics() {
  if (config_.metricsPort <= 0) return;
  const std::vector<bool>& sameMachine = peers_.sameMachine();
  const int localIndex = static_cast<int>(std::count(sameMachine.begin(), sameMachine.begin() + rank_, true));
  metrics_ = std::make_unique<CommMetrics>(CommMetrics::Identity{rank_, size_, identity(), transportsInUse()},
                                           config_.metricsPort, localIndex);
  calls_.countIn(metrics_.get());
  failures_.countIn(metrics_.get());
}

CommEngine::~CommEngine() {
  CommLogScope logScope(config_.commName);
  // Device calls still queued run (or fail, after an abort) first: their streams wait for them.
  device_.shutDown();
  flushTrace(calls_.trace(), rank_);
  writeAutotuneFile(calls_.planner(), config_, rank_);
  failures_.closeConnections(peers_.conns());
  peers_.conns().clear();
  // A failure's or an abort's counts stay scraped after the communicator goes (the call runner and the failures,
  // destroyed after this, still point at them: they stay alive).
  if (metrics_ && metrics_->sawFailure()) metrics::ProcessMetrics::instance().keep(std::move(metrics_));
}

void CommEngine::runBatch(std::span<const CallArgs> ops) {
  uint64_t number = 0;
  // The common call: nothing issued before it is still to run, and no device call was ever enqueued here (none to
  // drain): its number, its turn and the call lock in one step.
  if (!device_.everEnqueued() && order_->issueLockedIfIdle(number)) {
    LockedTurnPassedOnExit passOn(*order_, number);
    calls_.execute(
        ops, [this]() -> CommIO& { return *io_; }, false);
    return;
  }
  runIssued(issueHostCall(), ops);
}

void CommEngine::runIssued(uint64_t number, std::span<const CallArgs> ops, bool passTurn) {
  order_->waitTurn(number, failures_.state().abortFlag());
  TurnPassedOnExit passOn(passTurn ? order_.get() : nullptr, number);
  // Every rank makes its calls in the same order: a host call goes after the device calls enqueued before it (and
  // before the lock, which they take to run).
  device_.drain();
  CallLocked locked(*order_);
  calls_.execute(ops, [this]() -> CommIO& { return *io_; }, false);
}

void CommEngine::skipIssued(uint64_t number, bool passTurn) {
  order_->waitTurn(number, failures_.state().abortFlag());
  if (passTurn) order_->pass(number);
}

void* CommEngine::registerBuffer(const void* p, size_t bytes) {
  CallLocked locked(*order_);
  return peers_.registerBuffer(p, bytes);
}

void CommEngine::deregisterBuffer(void* handle) {
  CallLocked locked(*order_);
  peers_.deregisterBuffer(handle);
}

void CommEngine::requestAbort() {
  flight_.dump("chorusCommAbort");  // before the abort: the calls it stops are still pending in the record
  failures_.abort();
  order_->wakeAll();
}

void CommEngine::waitIdle() {
  PollBackoff backoff;
  // Calls queued on host streams count too: their streams run them (or, after an abort, fail them) promptly. A
  // call that holds a turn keeps the order busy until it has passed the turn on, its last touch of this
  // communicator; device enqueues hold no turn and are counted as callers.
  while (!order_->idle() || activeCallers_.load() > 0) backoff.pause();
  CallLocked locked(*order_);  // a device call still running
}

bool CommEngine::callInProgress() {
  if (!order_->tryLock()) return true;
  order_->unlock();
  return false;
}

std::string CommEngine::named(const std::string& message) const { return withCommName(config_.commName, message); }

// The family: split, shrink and grow (the specs come from CommFamily).

std::unique_ptr<CommEngine> CommEngine::makeChild(const std::vector<int>& members, int color, uint64_t split,
                                                  CommConfig config) {
  const bool share = CommFamily::canShareConnections(config_, config);
  return makeRelative(members, family_.splitChild(members, color, split), share, std::move(config));
}

std::unique_ptr<CommEngine> CommEngine::shrink(const std::vector<int>* excluded, bool abortFirst, CommConfig config) {
  CommLogScope logScope(config_.commName);
  const Deadline deadline = Deadline::after(config.timeoutSeconds);
  // Healthy: the calls queued before this one finish first. Failed (or said to be): they fail at once.
  if (abortFirst) requestAbort();
  waitIdle();
  const bool healthy = !abortFirst && failures_.state().healthy();
  const ShrinkRequest request = family_.shrinkRequest(excluded, named(errorContext(rank_)));
  const std::vector<int> members = agreeOnSurvivors(peers_.store(), request, deadline);
  const LaunchSpec child = family_.shrunkChild(request, members);
  CHORUS_INFO(rank_, "shrink: " << members.size() << " of " << size_ << " ranks go on (" << encodeRankList(members)
                                << "); this rank is " << child.rank << " of them");
  // After a failure the parent's connections are out of step (a call was cut short on them): the survivors
  // connect anew, through the same store.
  const bool share = healthy && CommFamily::canShareConnections(config_, config);
  return makeRelative(members, child, share, std::move(config));
}

std::unique_ptr<CommEngine> CommEngine::makeRelative(const std::vector<int>& members, const LaunchSpec& spec,
                                                     bool share, CommConfig config) {
  if (share) {
    return std::unique_ptr<CommEngine>(new CommEngine(SharingParent{}, *this, members, spec, std::move(config)));
  }
  return std::make_unique<CommEngine>(spec, std::move(config), peers_.storeServer());
}

chorusUniqueId CommEngine::growId() const { return family_.growId(); }

std::unique_ptr<CommEngine> CommEngine::grow(const chorusUniqueId* id, int newRanks, CommConfig config) {
  chorusUniqueId agreed{};
  if (rank_ == 0) agreed = *id;
  run(CallArgs{.collective = Collective::kBroadcast,
               .send = &agreed,
               .recv = &agreed,
               .count = sizeof(agreed),
               .type = chorusUint8,
               .root = 0});
  const LaunchSpec spec = family_.grown(agreed, newRanks, config_.commName);
  CHORUS_INFO(rank_, "grow: " << size_ << " ranks and " << newRanks << " new ones");
  return std::make_unique<CommEngine>(spec, std::move(config), peers_.storeServer());
}

std::unique_ptr<CommEngine> CommEngine::joinGrown(const chorusUniqueId& id, int newRanks, int rank, CommConfig config) {
  return std::make_unique<CommEngine>(CommFamily::joiner(id, newRanks, rank), std::move(config));
}

}  // namespace chorus
