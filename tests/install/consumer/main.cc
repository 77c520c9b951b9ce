// The C++ API from the installed header: RAII communicator, spans, exceptions with the result code.
#include <chorus/chorus.hpp>
#include <cstdio>
#include <vector>

int main() {
  chorus::Communicator comm(1, chorus::makeUniqueId(), 0, {.timeoutSeconds = 10, .commName = "consumer"});
  std::vector<int32_t> v{1, 2, 3};
  comm.allReduce(std::span<int32_t>(v), chorus::ReduceOp::kMax);
  try {
    comm.broadcast(std::span<int32_t>(v), 5);
    return 1;
  } catch (const chorus::Exception& e) {
    if (e.code() != chorusInvalidArgument) return 2;
  }
  std::printf("consumer_cpp ok (rank %d of %d)\n", comm.rank(), comm.size());
  return v[2] == 3 ? 0 : 3;
}
