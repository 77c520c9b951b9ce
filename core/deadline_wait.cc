#include "core/deadline_wait.h"

#include <algorithm>
#include <cerrno>
#include <string>

namespace chorus {

int pollWithin(std::span<pollfd> fds, const Deadline& deadline, int capMs, std::string_view context) {
  const int ready = ::poll(fds.data(), fds.size(), std::max(1, deadline.remainingMs(capMs)));
  if (ready >= 0) return ready;
  if (errno == EINTR) return 0;
  throwSystemError(std::string(context), "poll", errno);
}

void sleepWithin(const Deadline& deadline, int capMs) { ::poll(nullptr, 0, deadline.remainingMs(capMs)); }

std::string formatRankList(std::span<const int> ranks) {
  std::string out;
  for (int r : ranks) {
    if (!out.empty()) out += ", ";
    out += std::to_string(r);
  }
  return out;
}

}  // namespace chorus
