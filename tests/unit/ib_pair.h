// Two IbConnections of this process over the software verbs device, their out-of-band ends a socket pair: what a
// connection test needs of the ib transport without a bootstrap.
#pragma once
#ifdef CHORUS_HAVE_VERBS

#include <memory>
#include <stdexcept>
#include <utility>

#include "emulation/verbs/soft_verbs.h"
#include "tests/unit/device_test_support.h"
#include "transports/ib/ib_connection.h"

namespace chorus::test {

// onDemandPaging false: a device without ODP (large sends copy unless their buffer is registered).
inline std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> ibPair(int lanes = 1,
                                                                                  bool onDemandPaging = true) {
  std::string why;
  auto device = IbDevice::open(IbDeviceChoice{softVerbs(onDemandPaging), "", -1, ""}, &why);
  if (!device) throw std::runtime_error("soft verbs device: " + why);
  auto oob = tcpPair();
  IbQpSettings settings;
  settings.lanes = lanes;
  auto a = std::make_unique<IbConnection>(0, 1, device, settings, std::move(oob.first));
  auto b = std::make_unique<IbConnection>(1, 0, device, settings, std::move(oob.second));
  a->readyToReceive(b->localInfo());
  b->readyToReceive(a->localInfo());
  a->readyToSend();
  b->readyToSend();
  return {std::move(a), std::move(b)};
}

}  // namespace chorus::test
#endif  // CHORUS_HAVE_VERBS
