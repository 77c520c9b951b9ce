// The software verbs device (CHORUS_IB_EMULATION=1): the verbs the IB transport calls, implemented between
// processes of one machine (or of one lab's network namespaces) over TCP, strict where hardware is strict. It
// exists so that the ib transport runs, and is tested, where there is no RDMA adapter; it is not part of
// libchorus.so (emulation/CMakeLists.txt). docs/ib.md lists the rules it enforces and what it leaves out.
#pragma once

#include "transports/ib/verbs_api.h"

namespace chorus {

// The table of the software device (one device, "chorus_soft0", one RoCE port). onDemandPaging false: the same
// device reporting no ODP, as most adapters without it (tests of the registration paths).
const VerbsApi* softVerbs(bool onDemandPaging = true);

}  // namespace chorus
