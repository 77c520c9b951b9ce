// cuda_calls.h where torch has no CUDA (Debian's python3-torch): CUDA tensors are refused by name.
#include "cuda_calls.h"

namespace chorus_torch {

bool cudaCallsBuilt() { return false; }

std::unique_ptr<CudaCalls> makeCudaCalls(SharedComm) { return nullptr; }

}  // namespace chorus_torch
