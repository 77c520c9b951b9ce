// chorus_torch._C: the process group's constructor, as torch.distributed.Backend.register_backend wants it.
#include <pybind11/chrono.h>
#include <torch/python.h>

#include "cuda_calls.h"
#include "process_group_chorus.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "Chorus as a torch.distributed backend (see chorus_torch/__init__.py)";
  m.def("create_process_group", &chorus_torch::ProcessGroupChorus::create, pybind11::arg("store"),
        pybind11::arg("rank"), pybind11::arg("world_size"), pybind11::arg("timeout"),
        "Makes a ProcessGroupChorus over `store`; what register_backend('chorus', ...) calls.");
  m.def("is_chorus", [](const c10::intrusive_ptr<c10d::ProcessGroup>& pg) {
    return dynamic_cast<chorus_torch::ProcessGroupChorus*>(pg.get()) != nullptr;
  }, pybind11::arg("group"), "True when `group` is a ProcessGroupChorus.");
  m.def("split", [](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, int color, int key,
                    const std::chrono::duration<float>& timeout) -> c10::intrusive_ptr<c10d::ProcessGroup> {
    auto* parent = dynamic_cast<chorus_torch::ProcessGroupChorus*>(pg.get());
    TORCH_CHECK(parent != nullptr, "chorus_torch.split: the group is not a chorus group");
    pybind11::gil_scoped_release released;  // a collective over the parent: other Python threads go on meanwhile
    return parent->split(color, key, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  }, pybind11::arg("group"), pybind11::arg("color"), pybind11::arg("key"), pybind11::arg("timeout"),
  "chorusCommSplit of a chorus group (collective over it): the new group, or None for color -1 (CHORUS_SPLIT_NOCOLOR).");
  auto chorusGroup = [](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const char* call) {
    auto* group = dynamic_cast<chorus_torch::ProcessGroupChorus*>(pg.get());
    TORCH_CHECK(group != nullptr, call, ": the group is not a chorus group");
    return group;
  };
  auto ms = [](const std::chrono::duration<float>& t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t);
  };
  m.def("shrink", [=](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const std::vector<int>& exclude,
                      const std::chrono::duration<float>& timeout) -> c10::intrusive_ptr<c10d::ProcessGroup> {
    auto* group = chorusGroup(pg, "chorus_torch.shrink");
    pybind11::gil_scoped_release released;
    return group->shrink(exclude, ms(timeout));
  }, pybind11::arg("group"), pybind11::arg("exclude"), pybind11::arg("timeout"),
  "chorusCommShrink of a chorus group: exclude empty, after an error (the survivors agree on the lost ranks); "
  "otherwise a healthy group without the listed ranks.");
  m.def("grow_id", [=](const c10::intrusive_ptr<c10d::ProcessGroup>& pg) {
    auto id = chorusGroup(pg, "chorus_torch.grow_id")->growId();
    return pybind11::bytes(reinterpret_cast<const char*>(id.data()), id.size());
  }, pybind11::arg("group"), "chorusCommGetUniqueId on rank 0: the id new processes join a grown group with.");
  m.def("grow", [=](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, int newRanks, const std::string& id,
                    const std::chrono::duration<float>& timeout) -> c10::intrusive_ptr<c10d::ProcessGroup> {
    auto* group = chorusGroup(pg, "chorus_torch.grow");
    const std::vector<uint8_t> bytes(id.begin(), id.end());
    pybind11::gil_scoped_release released;
    return group->grow(newRanks, bytes, ms(timeout));
  }, pybind11::arg("group"), pybind11::arg("new_ranks"), pybind11::arg("id"), pybind11::arg("timeout"),
  "chorusCommGrow by a rank of the group (rank 0's id is used).");
  m.def("join_grown", [=](int newRanks, const std::string& id, int rank, const pybind11::object& storeObject,
                          const std::chrono::duration<float>& timeout) -> c10::intrusive_ptr<c10d::ProcessGroup> {
    const std::vector<uint8_t> bytes(id.begin(), id.end());
    c10::intrusive_ptr<c10d::Store> store;
    if (!storeObject.is_none()) store = storeObject.cast<c10::intrusive_ptr<c10d::Store>>();
    pybind11::gil_scoped_release released;
    return chorus_torch::ProcessGroupChorus::joinGrown(newRanks, bytes, rank, store, ms(timeout));
  }, pybind11::arg("new_ranks"), pybind11::arg("id"), pybind11::arg("rank"), pybind11::arg("store"),
  pybind11::arg("timeout"), "chorusCommGrow by a new process: rank `rank` of the grown group.");
  m.def(
      "flight_record",
      [=](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, int newest) {
        return chorusGroup(pg, "chorus_torch.flight_record")->flightRecord(newest);
      },
      pybind11::arg("group"), pybind11::arg("newest"),
      "chorusCommFlightRecord: the group's last calls on this rank as JSON text (never waits for the group's work).");
  m.def(
      "dump_flight_record",
      [=](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const std::string& path) {
        chorusGroup(pg, "chorus_torch.dump_flight_record")->dumpFlightRecord(path);
      },
      pybind11::arg("group"), pybind11::arg("path"),
      "chorusCommDumpFlightRecord: writes the record to `path` (\"\": this rank's file in CHORUS_FLIGHT_DIR).");
  m.def("cuda_tensors", &chorus_torch::cudaCallsBuilt,
        "True when this build takes CUDA tensors (it was built against a torch with CUDA).");
  m.def("time_c_allreduce", [](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, size_t bytes, int iters) {
    auto* group = dynamic_cast<chorus_torch::ProcessGroupChorus*>(pg.get());
    TORCH_CHECK(group != nullptr, "chorus_torch.time_c_allreduce: the group is not a chorus group");
    pybind11::gil_scoped_release released;
    return group->timeCAllReduce(bytes, iters);
  }, pybind11::arg("group"), pybind11::arg("bytes"), pybind11::arg("iters"),
  "Seconds per in-place float32 allreduce of `bytes` made directly on the C ABI (blocking, no stream) on the "
  "group's communicator: what the torch layer's overhead is measured against (collective over the group).");
}
