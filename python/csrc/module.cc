// chorus_torch._C: the process group's constructor, as torch.distributed.Backend.register_backend wants it.
#include <pybind11/chrono.h>
#include <torch/python.h>

#include "process_group_chorus.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "Chorus as a torch.distributed backend (see chorus_torch/__init__.py)";
  m.def("create_process_group", &chorus_torch::ProcessGroupChorus::create, pybind11::arg("store"),
        pybind11::arg("rank"), pybind11::arg("world_size"), pybind11::arg("timeout"),
        "Makes a ProcessGroupChorus over `store`; what register_backend('chorus', ...) calls.");
}
