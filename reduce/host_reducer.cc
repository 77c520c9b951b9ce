// The host-memory Reducer: argument checks, then one call through the kernel table chosen for this CPU.
#include <sstream>

#include "reduce/reduce_kernels.h"
#include "reduce/reducer.h"
#include "core/datatype.h"
#include "core/error.h"

namespace chorus {
namespace {

class HostReducer final : public Reducer {
 public:
  explicit HostReducer(const ReduceKernelTable& kernels) : kernels_(kernels) {}

  void reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type, chorusRedOp_t op) override {
    if (!opSupportsType(op, type)) {
      throwInvalidArgument(describe("reduce", count, type, op) + ": unsupported datatype or reduction op");
    }
    if (count == 0) return;
    if (dst == nullptr || a == nullptr || b == nullptr) {
      throwInvalidArgument(describe("reduce", count, type, op) + ": null buffer");
    }
    // Average sums here; the algorithm divides once at the end (finishAverage).
    const int kernelOp = op == chorusAvg ? chorusSum : op;
    kernels_.reduce[type][kernelOp](dst, a, b, count);
  }

  void finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) override {
    if (!validType(type) || nranks < 1) {
      throwInvalidArgument(describe("finishAverage", count, type, chorusAvg) + " over " + std::to_string(nranks) +
                           " ranks: unsupported datatype or rank count");
    }
    if (count == 0 || nranks == 1) return;
    if (data == nullptr) throwInvalidArgument(describe("finishAverage", count, type, chorusAvg) + ": null buffer");
    kernels_.average[type](data, count, nranks);
  }

 private:
  static std::string describe(const char* what, size_t count, chorusDataType_t type, chorusRedOp_t op) {
    std::ostringstream os;
    os << "host " << what << " of " << count << " " << typeName(type) << " (" << static_cast<int>(type)
       << ") elements with op " << opName(op) << " (" << static_cast<int>(op) << ")";
    return os.str();
  }

  const ReduceKernelTable& kernels_;
};

}  // namespace

Reducer& hostReducer() {
  static HostReducer reducer(activeReduceKernels());
  return reducer;
}

}  // namespace chorus
