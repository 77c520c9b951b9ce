// Work a communicator progresses beside whatever call is under way: the window connections, whose puts land
// whenever this rank's engine progresses (chorus.h's windows), not only when it waits for their signals.
#pragma once

#include <poll.h>

#include <vector>

namespace chorus {

class SideProgress {
 public:
  // Moves whatever can move without blocking; true when anything did. Throws nothing: a failure is kept for the
  // call it concerns.
  virtual bool progressSide() = 0;
  // Adds the descriptors that wake a call sleeping while nothing of its own moves; the next progressSide after
  // it visits every connection.
  virtual void addSidePollFds(std::vector<pollfd>& fds) = 0;

 protected:
  ~SideProgress() = default;
};

}  // namespace chorus
