// Whether copying straight out of another process (process_vm_readv) beats the shared ring on this machine.
// Its per-page cost varies widely: near memcpy on bare metal, several times slower in some VMs.
#pragma once

namespace chorus {

struct CmaSpeed {
  double cmaGBs = 0;     // process_vm_readv, 2 MiB, best of a few
  double memcpyGBs = 0;  // memcpy of the same
  // A ring transfer costs two memcpys (in and out, on the two ranks' cores); a CMA transfer one process_vm_readv.
  // Worth it when that one copy is not much slower than a memcpy.
  bool worthIt = false;
};

// Measured once per process (a few hundred microseconds), then cached.
const CmaSpeed& cmaSpeed();

}  // namespace chorus
