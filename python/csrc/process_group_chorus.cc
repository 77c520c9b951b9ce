#include "process_group_chorus.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "chorus_work.h"
#include "tensor_copies.h"
#include "torch_types.h"

namespace chorus_torch {
namespace {

// The store key under which rank 0 publishes the communicator's unique id.
constexpr const char* kUniqueIdKey = "chorus_torch/unique_id";

}  // namespace

ProcessGroupChorus::ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                       std::chrono::milliseconds timeout)
    : ProcessGroup(rank, size), store_(store) {
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutSeconds = std::chrono::duration<double>(timeout).count();
  if (launchedByChorusrun(rank, size)) {
    // chorusrun serves the store outside the ranks, so the group survives the loss of any rank (rank 0 included).
    check(chorusCommInitFromEnvConfig(&comm_, &config), "chorusCommInitFromEnvConfig");
  } else {
    initThroughTorchStore(store, rank, size, config);
  }
  sharedComm_ = SharedComm(comm_, chorusCommDestroy);
  check(chorusHostStreamCreate(&stream_), "chorusHostStreamCreate");
  cuda_ = makeCudaCalls(sharedComm_);
  init();
}

bool ProcessGroupChorus::launchedByChorusrun(int rank, int size) {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  return env("CHORUS_STORE_SERVED") == "1" && env("CHORUS_RANK") == std::to_string(rank) &&
         env("CHORUS_WORLD_SIZE") == std::to_string(size);
}

void ProcessGroupChorus::initThroughTorchStore(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                               chorusConfig_t& config) {
  chorusUniqueId id;
  if (rank == 0) {
    check(chorusGetUniqueId(&id), "chorusGetUniqueId");
    const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
    store->set(kUniqueIdKey, std::vector<uint8_t>(bytes, bytes + sizeof(id)));
  }
  const std::vector<uint8_t> published = store->get(kUniqueIdKey);
  TORCH_CHECK(published.size() == sizeof(id), "ProcessGroupChorus: the unique id in the store has the wrong size");
  std::memcpy(&id, published.data(), sizeof(id));
  check(chorusCommInitRankConfig(&comm_, size, id, rank, &config), "chorusCommInitRankConfig");
}

ProcessGroupChorus::ProcessGroupChorus(chorusComm_t comm, int rank, int size, c10::intrusive_ptr<c10d::Store> store,
                                       std::string storePrefix)
    : ProcessGroup(rank, size),
      comm_(comm),
      sharedComm_(comm, chorusCommDestroy),
      store_(std::move(store)),
      storePrefix_(std::move(storePrefix)) {
  check(chorusHostStreamCreate(&stream_), "chorusHostStreamCreate");
  cuda_ = makeCudaCalls(sharedComm_);
  init();
}

c10::intrusive_ptr<ProcessGroupChorus> ProcessGroupChorus::split(int color, int key, std::chrono::milliseconds timeout) {
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;  // every field not set here is inherited from this group's
  config.timeoutSeconds = std::chrono::duration<double>(timeout).count();
  chorusComm_t child = nullptr;
  check(chorusCommSplit(comm_, color, key, &child, &config), "chorusCommSplit");
  const std::string prefix = storePrefix_ + "split" + std::to_string(++splits_) + "/" + std::to_string(color) + "/";
  if (child == nullptr) return {};
  int rank = 0, size = 0;
  chorusCommUserRank(child, &rank);
  chorusCommCount(child, &size);
  return c10::make_intrusive<ProcessGroupChorus>(child, rank, size, store_, prefix);
}

namespace {

chorusConfig_t configWithTimeout(std::chrono::milliseconds timeout) {
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;  // every field not set here is inherited from the group's
  config.timeoutSeconds = std::chrono::duration<double>(timeout).count();
  return config;
}

chorusUniqueId idOf(const std::vector<uint8_t>& bytes, const char* call) {
  chorusUniqueId id;
  TORCH_CHECK(bytes.size() == sizeof(id), call, ": the id has ", bytes.size(), " bytes, not ", sizeof(id));
  std::memcpy(&id, bytes.data(), sizeof(id));
  return id;
}

// A grown group's store prefix, the same on its old ranks and on the ones that joined: rank 0 draws it.
std::string grownPrefix(chorusComm_t grown) {
  uint64_t tag = 0;
  int rank = 0;
  chorusCommUserRank(grown, &rank);
  if (rank == 0) tag = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const chorusResult_t r = chorusBroadcast(&tag, &tag, 1, chorusUint64, 0, grown, nullptr);
  TORCH_CHECK(r == chorusSuccess, "ProcessGroupChorus: the grown group's first broadcast failed: ",
              chorusGetLastError(grown));
  return "grown" + std::to_string(tag) + "/";
}

// For calls that make a communicator: their failure is recorded as the thread's last error, not a communicator's.
void checkNew(chorusResult_t r, const char* call) {
  TORCH_CHECK(r == chorusSuccess, "ProcessGroupChorus: ", call, " failed: ", chorusGetErrorString(r), ": ",
              chorusGetLastError(nullptr));
}

}  // namespace

c10::intrusive_ptr<ProcessGroupChorus> ProcessGroupChorus::adopt(chorusComm_t comm, const std::string& prefix) {
  int rank = 0, size = 0;
  chorusCommUserRank(comm, &rank);
  chorusCommCount(comm, &size);
  return c10::make_intrusive<ProcessGroupChorus>(comm, rank, size, store_, prefix);
}

c10::intrusive_ptr<ProcessGroupChorus> ProcessGroupChorus::shrink(const std::vector<int>& exclude,
                                                                  std::chrono::milliseconds timeout) {
  chorusConfig_t config = configWithTimeout(timeout);
  chorusComm_t child = nullptr;
  const chorusResult_t r =
      exclude.empty() ? chorusCommShrink(comm_, nullptr, 0, &child, &config, CHORUS_SHRINK_ABORT)
                      : chorusCommShrink(comm_, exclude.data(), static_cast<int>(exclude.size()), &child, &config,
                                         CHORUS_SHRINK_DEFAULT);
  checkNew(r, "chorusCommShrink");
  return adopt(child, storePrefix_ + "shrink" + std::to_string(++reshapes_) + "/");
}

std::vector<uint8_t> ProcessGroupChorus::growId() {
  chorusUniqueId id;
  check(chorusCommGetUniqueId(comm_, &id), "chorusCommGetUniqueId");
  const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
  return std::vector<uint8_t>(bytes, bytes + sizeof(id));
}

c10::intrusive_ptr<ProcessGroupChorus> ProcessGroupChorus::grow(int newRanks, const std::vector<uint8_t>& id,
                                                                std::chrono::milliseconds timeout) {
  chorusConfig_t config = configWithTimeout(timeout);
  chorusUniqueId growId{};
  if (getRank() == 0) growId = idOf(id, "chorus_torch.grow");
  chorusComm_t grown = nullptr;
  const chorusResult_t r = chorusCommGrow(comm_, newRanks, getRank() == 0 ? &growId : nullptr, -1, &grown, &config);
  checkNew(r, "chorusCommGrow");
  return adopt(grown, grownPrefix(grown));
}

c10::intrusive_ptr<ProcessGroupChorus> ProcessGroupChorus::joinGrown(int newRanks, const std::vector<uint8_t>& id,
                                                                     int rank, c10::intrusive_ptr<c10d::Store> store,
                                                                     std::chrono::milliseconds timeout) {
  chorusConfig_t config = configWithTimeout(timeout);
  const chorusUniqueId growId = idOf(id, "chorus_torch.join_grown");
  chorusComm_t grown = nullptr;
  const chorusResult_t r = chorusCommGrow(nullptr, newRanks, &growId, rank, &grown, &config);
  checkNew(r, "chorusCommGrow");
  int size = 0;
  chorusCommCount(grown, &size);
  return c10::make_intrusive<ProcessGroupChorus>(grown, rank, size, std::move(store), grownPrefix(grown));
}

double ProcessGroupChorus::timeCAllReduce(size_t bytes, int iters) {
  std::vector<float> data(std::max<size_t>(1, bytes / sizeof(float)), 1.0f);
  check(chorusStreamSynchronize(stream_), "chorusStreamSynchronize");  // nothing of the group's may be queued
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    check(chorusAllReduce(data.data(), data.data(), data.size(), chorusFloat32, chorusSum, comm_, nullptr),
          "chorusAllReduce");
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / std::max(1, iters);
}

std::string ProcessGroupChorus::flightRecord(int newest) {
  size_t size = 0;
  check(chorusCommFlightRecord(comm_, newest, nullptr, &size), "chorusCommFlightRecord");
  // The record may grow between the two calls: ask again with room to spare until it fits.
  for (;;) {
    std::string text(size + 4096, '\0');
    size = text.size();
    const chorusResult_t r = chorusCommFlightRecord(comm_, newest, text.data(), &size);
    if (r == chorusSuccess) {
      text.resize(size - 1);
      return text;
    }
    if (r != chorusInvalidArgument || size <= text.size()) check(r, "chorusCommFlightRecord");
  }
}

void ProcessGroupChorus::dumpFlightRecord(const std::string& path) {
  check(chorusCommDumpFlightRecord(comm_, path.empty() ? nullptr : path.c_str()), "chorusCommDumpFlightRecord");
}

ProcessGroupChorus::~ProcessGroupChorus() {
  if (stream_) chorusHostStreamDestroy(stream_);  // the communicator goes with sharedComm_'s last holder
}

c10::intrusive_ptr<c10d::ProcessGroup> ProcessGroupChorus::create(const c10::intrusive_ptr<c10d::Store>& store,
                                                                  int rank, int size,
                                                                  const std::chrono::duration<float>& timeout) {
  return c10::make_intrusive<ProcessGroupChorus>(store, rank, size,
                                                 std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
}

void ProcessGroupChorus::check(chorusResult_t r, const char* call) const {
  if (r == chorusSuccess) return;
  TORCH_CHECK(false, "ProcessGroupChorus: ", call, " failed: ", chorusGetErrorString(r), ": ",
              chorusGetLastError(comm_ != nullptr ? comm_ : nullptr));
}

void ProcessGroupChorus::makeCalls(const char* call, const Calls& calls, bool grouped, chorusStream_t stream) {
  ++sequence_;
  if (grouped) check(chorusGroupStart(), "chorusGroupStart");
  try {
    calls(stream);
  } catch (...) {
    if (grouped) chorusGroupEnd();
    throw;
  }
  if (grouped) check(chorusGroupEnd(), call);
}

std::shared_ptr<StreamEvent> ProcessGroupChorus::issue(const char* call, const Calls& calls, bool grouped) {
  makeCalls(call, calls, grouped, stream_);
  chorusEvent_t event = nullptr;
  check(chorusEventCreate(&event), "chorusEventCreate");
  const chorusResult_t recorded = chorusEventRecord(event, stream_);
  if (recorded != chorusSuccess) chorusEventDestroy(event);
  check(recorded, "chorusEventRecord");
  return std::make_shared<StreamEvent>(event);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::queue(c10d::OpType type, const char* call, const Calls& calls,
                                                         std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep,
                                                         std::function<void()> finish, bool grouped) {
  const at::Device device = deviceOf(outputs, keep, call);
  if (device.is_cuda()) {
    TORCH_CHECK(cuda_ != nullptr, "ProcessGroupChorus: ", call, ": this build takes no CUDA tensors");
    makeCalls(call, calls, grouped, cuda_->begin(device));
    return cuda_->end(type, call, device, std::move(outputs), keep, finish);
  }
  return c10::make_intrusive<ChorusWork>(type, call, issue(call, calls, grouped), std::move(outputs), std::move(keep),
                                         std::move(finish));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduceEach(std::vector<at::Tensor>& tensors,
                                                                const c10d::ReduceOp& op, c10d::OpType type,
                                                                const char* call, bool grouped) {
  std::vector<at::Tensor> work;
  for (const at::Tensor& t : tensors) work.push_back(contiguousOf(t, call));
  return queue(
      type, call,
      [&](chorusStream_t s) {
        for (at::Tensor& t : work) {
          check(chorusAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), chorusTypeOf(t, call), chorusOpOf(op, t, call),
                                comm_, s),
                "chorusAllReduce");
        }
      },
      tensors, work, copyBack(tensors, work), grouped);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::sparseAllreduce(at::Tensor& tensor, const c10d::ReduceOp& op) {
  const char* call = "allreduce";
  requireCpu(tensor, call);
  TORCH_CHECK(op == c10d::ReduceOp::SUM, "ProcessGroupChorus: allreduce of sparse tensors supports SUM only");
  const at::Tensor input = tensor.coalesce();
  const int64_t n = getSize(), sparseDims = input.sparse_dim();
  // Entries per rank first (the rest waits for them: the gathered entries are padded to the largest count).
  std::vector<int64_t> counts(static_cast<size_t>(n));
  const int64_t mine = input._nnz();
  check(chorusAllGather(&mine, counts.data(), 1, chorusInt64, comm_, stream_), "chorusAllGather");
  check(chorusStreamSynchronize(stream_), "chorusStreamSynchronize");
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  at::Tensor values = input._values().contiguous();
  int64_t perEntry = 1;  // elements per entry: the dense dimensions' product (known even with no entries)
  for (int64_t d = 1; d < values.dim(); ++d) perEntry *= values.size(d);
  std::vector<int64_t> valueShape = values.sizes().vec();
  at::Tensor indices = at::zeros({most, sparseDims}, input._indices().options());
  indices.narrow(0, 0, mine).copy_(input._indices().t());
  at::Tensor paddedValues = at::zeros({most, perEntry}, values.options());
  paddedValues.narrow(0, 0, mine).copy_(values.reshape({mine, perEntry}));
  at::Tensor allIndices = at::empty({n * most, sparseDims}, indices.options());
  at::Tensor allValues = at::empty({n * most, perEntry}, values.options());
  at::Tensor target = tensor;
  const std::vector<int64_t> sizes = input.sizes().vec();
  return queue(
      c10d::OpType::ALLREDUCE, call,
      [&](chorusStream_t s) {
        check(chorusAllGather(indices.data_ptr(), allIndices.data_ptr(), indices.numel(), chorusInt64, comm_, s),
              "chorusAllGather");
        check(chorusAllGather(paddedValues.data_ptr(), allValues.data_ptr(), paddedValues.numel(),
                              chorusTypeOf(paddedValues, call), comm_, s),
              "chorusAllGather");
      },
      {tensor}, {indices, paddedValues, allIndices, allValues},
      [=]() mutable {
        std::vector<at::Tensor> idx, val;
        for (int64_t r = 0; r < n; ++r) {
          const int64_t c = counts[static_cast<size_t>(r)];
          idx.push_back(allIndices.narrow(0, r * most, c));
          val.push_back(allValues.narrow(0, r * most, c));
        }
        valueShape[0] = -1;
        at::Tensor sum = at::sparse_coo_tensor(at::cat(idx).t(), at::cat(val).reshape(valueShape), sizes).coalesce();
        target.copy_(sum);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  if (tensors.size() == 1 && tensors[0].is_sparse()) return sparseAllreduce(tensors[0], opts.reduceOp);
  return allreduceEach(tensors, opts.reduceOp, c10d::OpType::ALLREDUCE, "allreduce", tensors.size() > 1);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  // One group: Chorus fuses small allreduces of one dtype into one.
  return allreduceEach(tensors, opts.reduceOp, c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  const char* call = "broadcast";
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupChorus: broadcast takes one tensor per process");
  at::Tensor t = contiguousOf(tensors[0], call);
  at::Tensor out = tensors[0];
  return queue(
      c10d::OpType::BROADCAST, call,
      [&](chorusStream_t s) {
        check(chorusBroadcast(t.data_ptr(), t.data_ptr(), t.numel(), chorusTypeOf(t, call),
                              static_cast<int>(opts.rootRank), comm_, s),
              "chorusBroadcast");
      },
      tensors, {t}, copyBack(out, t));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  const char* call = "reduce";
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupChorus: reduce takes one tensor per process");
  at::Tensor t = contiguousOf(tensors[0], call);
  at::Tensor out = tensors[0];
  return queue(
      c10d::OpType::REDUCE, call,
      [&](chorusStream_t s) {
        check(chorusReduce(t.data_ptr(), t.data_ptr(), t.numel(), chorusTypeOf(t, call),
                           chorusOpOf(opts.reduceOp, t, call), static_cast<int>(opts.rootRank), comm_, s),
              "chorusReduce");
      },
      tensors, {t}, copyBack(out, t));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::AllgatherOptions&) {
  const char* call = "_allgather_base";
  at::Tensor in = contiguousOf(input, call), out = contiguousOf(output, call);
  TORCH_CHECK(out.numel() == in.numel() * getSize(), "ProcessGroupChorus: ", call,
              ": the output must hold world_size times the input");
  at::Tensor target = output;
  return queue(
      c10d::OpType::_ALLGATHER_BASE, call,
      [&](chorusStream_t s) {
        check(chorusAllGather(in.data_ptr(), out.data_ptr(), in.numel(), chorusTypeOf(in, call), comm_, s),
              "chorusAllGather");
      },
      {output}, {in, out}, copyBack(target, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions&) {
  const char* call = "allgather";
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1, "ProcessGroupChorus: allgather takes one tensor per process");
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == getSize(), "ProcessGroupChorus: allgather needs world_size outputs");
  at::Tensor in = contiguousOf(inputs[0], call);
  requireSameShape(outputs[0], in, call);
  at::Tensor flat = at::empty({in.numel() * getSize()}, in.options());
  std::vector<at::Tensor> list = outputs[0];
  return queue(
      c10d::OpType::ALLGATHER, call,
      [&](chorusStream_t s) {
        check(chorusAllGather(in.data_ptr(), flat.data_ptr(), in.numel(), chorusTypeOf(in, call), comm_, s),
              "chorusAllGather");
      },
      list, {in, flat}, [flat, list]() mutable { unflattenInto(flat, list); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions&) {
  // As Gloo does: the inputs flattened into one tensor, one allgather, the pieces copied out per rank.
  const char* call = "allgather_coalesced";
  TORCH_CHECK(!inputs.empty(), "ProcessGroupChorus: allgather_coalesced needs at least one input");
  TORCH_CHECK(static_cast<int>(outputLists.size()) == getSize(),
              "ProcessGroupChorus: allgather_coalesced needs one output list per rank");
  for (const at::Tensor& t : inputs) {
    requireSupportedDevice(t, call);
    TORCH_CHECK(t.scalar_type() == inputs[0].scalar_type(),
                "ProcessGroupChorus: allgather_coalesced needs one dtype for every input");
  }
  for (const std::vector<at::Tensor>& list : outputLists) {
    TORCH_CHECK(list.size() == inputs.size(), "ProcessGroupChorus: allgather_coalesced: every output list must "
                                              "hold one tensor per input");
    for (size_t i = 0; i < list.size(); ++i) requireSameShape({list[i]}, inputs[i], call);
  }
  at::Tensor in = flatOf(inputs);
  at::Tensor flat = at::empty({in.numel() * getSize()}, in.options());
  std::vector<at::Tensor> all;
  for (const std::vector<at::Tensor>& list : outputLists) all.insert(all.end(), list.begin(), list.end());
  return queue(
      c10d::OpType::ALLGATHER_COALESCED, call,
      [&](chorusStream_t s) {
        check(chorusAllGather(in.data_ptr(), flat.data_ptr(), in.numel(), chorusTypeOf(in, call), comm_, s),
              "chorusAllGather");
      },
      all, {in, flat}, [flat, all]() mutable { unflattenInto(flat, all); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  const char* call = "gather";
  TORCH_CHECK(inputs.size() == 1, "ProcessGroupChorus: gather takes one tensor per process");
  const bool root = getRank() == opts.rootRank;
  at::Tensor in = contiguousOf(inputs[0], call);
  std::vector<at::Tensor> list = root && !outputs.empty() ? outputs[0] : std::vector<at::Tensor>{};
  if (root) {
    TORCH_CHECK(static_cast<int>(list.size()) == getSize(), "ProcessGroupChorus: gather needs world_size outputs on the root");
    requireSameShape(list, in, call);
  }
  at::Tensor flat = root ? at::empty({in.numel() * getSize()}, in.options()) : at::Tensor();
  return queue(
      c10d::OpType::GATHER, call,
      [&](chorusStream_t s) {
        check(chorusGather(in.data_ptr(), root ? flat.data_ptr() : nullptr, in.numel(), chorusTypeOf(in, call),
                           static_cast<int>(opts.rootRank), comm_, s),
              "chorusGather");
      },
      list, {in, root ? flat : in}, [flat, list, root]() mutable {
        if (root) unflattenInto(flat, list);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  const char* call = "scatter";
  TORCH_CHECK(outputs.size() == 1, "ProcessGroupChorus: scatter takes one tensor per process");
  const bool root = getRank() == opts.rootRank;
  at::Tensor out = contiguousOf(outputs[0], call);
  at::Tensor flat;
  if (root) {
    TORCH_CHECK(!inputs.empty() && static_cast<int>(inputs[0].size()) == getSize(),
                "ProcessGroupChorus: scatter needs world_size inputs on the root");
    requireSameShape(inputs[0], out, call);
    flat = flatOf(inputs[0]);
  }
  at::Tensor target = outputs[0];
  return queue(
      c10d::OpType::SCATTER, call,
      [&](chorusStream_t s) {
        check(chorusScatter(root ? flat.data_ptr() : nullptr, out.data_ptr(), out.numel(), chorusTypeOf(out, call),
                            static_cast<int>(opts.rootRank), comm_, s),
              "chorusScatter");
      },
      outputs, {out, root ? flat : out}, copyBack(target, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                        const c10d::ReduceScatterOptions& opts) {
  const char* call = "_reduce_scatter_base";
  at::Tensor in = contiguousOf(input, call), out = contiguousOf(output, call);
  TORCH_CHECK(in.numel() == out.numel() * getSize(), "ProcessGroupChorus: ", call,
              ": the input must hold world_size times the output");
  at::Tensor target = output;
  return queue(
      c10d::OpType::_REDUCE_SCATTER_BASE, call,
      [&](chorusStream_t s) {
        check(chorusReduceScatter(in.data_ptr(), out.data_ptr(), out.numel(), chorusTypeOf(out, call),
                                  chorusOpOf(opts.reduceOp, out, call), comm_, s),
              "chorusReduceScatter");
      },
      {output}, {in, out}, copyBack(target, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                                  const c10d::ReduceScatterOptions& opts) {
  const char* call = "reduce_scatter";
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1, "ProcessGroupChorus: reduce_scatter takes one tensor per process");
  TORCH_CHECK(static_cast<int>(inputs[0].size()) == getSize(), "ProcessGroupChorus: reduce_scatter needs world_size inputs");
  at::Tensor out = contiguousOf(outputs[0], call);
  requireSameShape(inputs[0], out, call);
  at::Tensor flat = flatOf(inputs[0]);
  at::Tensor target = outputs[0];
  return queue(
      c10d::OpType::REDUCE_SCATTER, call,
      [&](chorusStream_t s) {
        check(chorusReduceScatter(flat.data_ptr(), out.data_ptr(), out.numel(), chorusTypeOf(out, call),
                                  chorusOpOf(opts.reduceOp, out, call), comm_, s),
              "chorusReduceScatter");
      },
      outputs, {flat, out}, copyBack(target, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                 std::vector<int64_t>& outputSplits,
                                                                 std::vector<int64_t>& inputSplits,
                                                                 const c10d::AllToAllOptions&) {
  const char* call = "alltoall_base";
  at::Tensor in = contiguousOf(input, call), out = contiguousOf(output, call);
  const size_t n = static_cast<size_t>(getSize());
  at::Tensor target = output;
  auto finish = copyBack(target, out);
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(in.numel() == out.numel() && in.numel() % static_cast<int64_t>(n) == 0, "ProcessGroupChorus: ", call,
                ": input and output must have equal sizes that split evenly over the ranks");
    return queue(
        c10d::OpType::ALLTOALL_BASE, call,
        [&](chorusStream_t s) {
          check(chorusAllToAll(in.data_ptr(), out.data_ptr(), in.numel() / static_cast<int64_t>(n),
                               chorusTypeOf(in, call), comm_, s),
                "chorusAllToAll");
        },
        {output}, {in, out}, finish);
  }
  // Splits count rows of dim 0; Chorus counts elements.
  auto elements = [&](const at::Tensor& t, const std::vector<int64_t>& splits, std::vector<size_t>& counts,
                      std::vector<size_t>& displs) {
    const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    const int64_t perRow = rows == 0 ? 0 : t.numel() / rows;
    counts.assign(n, 0);
    displs.assign(n, 0);
    size_t at = 0;
    for (size_t p = 0; p < n; ++p) {
      counts[p] = static_cast<size_t>(splits.empty() ? rows / static_cast<int64_t>(n) : splits[p]) *
                  static_cast<size_t>(perRow);
      displs[p] = at;
      at += counts[p];
    }
  };
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  elements(in, inputSplits, sendCounts, sendDispls);
  elements(out, outputSplits, recvCounts, recvDispls);
  return queue(
      c10d::OpType::ALLTOALL_BASE, call,
      [&](chorusStream_t s) {
        check(chorusAllToAllv(in.data_ptr(), sendCounts.data(), sendDispls.data(), out.data_ptr(), recvCounts.data(),
                              recvDispls.data(), chorusTypeOf(in, call), comm_, s),
              "chorusAllToAllv");
      },
      {output}, {in, out}, finish);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions&) {
  const char* call = "alltoall";
  const size_t n = static_cast<size_t>(getSize());
  TORCH_CHECK(outputs.size() == n && inputs.size() == n, "ProcessGroupChorus: alltoall needs world_size tensors each way");
  at::Tensor sendFlat = flatOf(inputs);
  at::Tensor recvFlat = at::empty({std::accumulate(outputs.begin(), outputs.end(), int64_t{0},
                                                   [](int64_t s, const at::Tensor& t) { return s + t.numel(); })},
                                  outputs[0].options());
  std::vector<size_t> sendCounts(n), sendDispls(n), recvCounts(n), recvDispls(n);
  size_t s = 0, r = 0;
  for (size_t p = 0; p < n; ++p) {
    sendCounts[p] = static_cast<size_t>(inputs[p].numel());
    sendDispls[p] = s;
    s += sendCounts[p];
    recvCounts[p] = static_cast<size_t>(outputs[p].numel());
    recvDispls[p] = r;
    r += recvCounts[p];
  }
  std::vector<at::Tensor> list = outputs;
  return queue(
      c10d::OpType::ALLTOALL, call,
      [&](chorusStream_t s) {
        check(chorusAllToAllv(sendFlat.data_ptr(), sendCounts.data(), sendDispls.data(), recvFlat.data_ptr(),
                              recvCounts.data(), recvDispls.data(), chorusTypeOf(sendFlat, call), comm_, s),
              "chorusAllToAllv");
      },
      list, {sendFlat, recvFlat}, [recvFlat, list]() mutable { unflattenInto(recvFlat, list); });
}

}  // namespace chorus_torch
