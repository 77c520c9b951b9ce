// How a communicator's CommIOs (host and device alike) wait while nothing moves: progress rounds spun, then rounds
// yielded, then asleep in poll.
#pragma once

namespace chorus {

struct WaitPolicy {
  int spinRounds = 200;
  int yieldRounds = 200;
  // For `localRanks` ranks on this machine (this one included): more than the cores means no spinning.
  static WaitPolicy forRanksOnMachine(int localRanks);
};

}  // namespace chorus
