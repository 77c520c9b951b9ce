#include "transports/complete_transfers.h"

#include "core/deadline_wait.h"

namespace chorus {

void completeTransfers(const std::vector<PostedTransfer>& posted, const Deadline& deadline,
                       const TransferMessages& say) {
  // Runs f, giving a connection's error the step's context.
  auto onBehalfOf = [&](Connection& c, auto f) {
    try {
      f();
    } catch (const Error& e) {
      if (say.failed) throw say.failed(e, c.peer());
      throw;
    }
  };
  std::vector<bool> done(posted.size(), false);
  std::vector<int> waiting;
  std::vector<pollfd> fds;
  std::vector<Connection*> owners;  // owners[i]: the connection fds[i] belongs to
  for (;;) {
    waiting.clear();
    fds.clear();
    owners.clear();
    for (size_t i = 0; i < posted.size(); ++i) {
      if (done[i]) continue;
      Connection& c = *posted[i].conn;
      onBehalfOf(c, [&] {
        while (c.progress()) {
        }
      });
      done[i] = c.sendsDone() > posted[i].send && c.recvsDone() > posted[i].recv;
      if (done[i]) continue;
      waiting.push_back(c.peer());
      const size_t before = fds.size();
      c.addPollFds(fds);
      c.addHangupFds(fds);
      owners.insert(owners.end(), fds.size() - before, &c);
    }
    if (waiting.empty()) return;
    throwIfExpired(deadline, [&] { return say.timedOut(formatRankList(waiting)); });
    // Capped so that the deadline is seen even where a transport has no descriptor to sleep on.
    if (pollWithin(fds, deadline, 50, say.context) == 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) onBehalfOf(*owners[i], [&] { owners[i]->checkAlive(); });
    }
  }
}

}  // namespace chorus
