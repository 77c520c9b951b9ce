#include "tests/collectives/emulated_hosts.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace chorus::test {

void emulateHosts(int rank, int nranks) {
  const char* spec = std::getenv("CHORUS_TEST_HOSTS");
  if (!spec || rank < 0 || nranks <= 0) return;
  const int hosts = std::max(1, std::atoi(spec));
  int host;
  if (std::strstr(spec, "/rr")) {
    host = rank % hosts;
  } else {
    const int base = nranks / hosts, extra = nranks % hosts;  // the first `extra` hosts get one more rank
    const int bigBlock = (base + 1) * extra;
    host = rank < bigBlock ? rank / (base + 1) : extra + (rank - bigBlock) / std::max(1, base);
  }
  setenv("CHORUS_HOST_ID", ("emulated-host-" + std::to_string(host)).c_str(), 1);
}

}  // namespace chorus::test
