// The software verbs device's entry point (transports/ib/verbs_api.h): how the ib transport reaches this emulation
// of an RDMA adapter under CHORUS_IB_EMULATION=1, by name, from outside libchorus.so.
#include "emulation/verbs/soft_verbs.h"
#include "transports/ib/verbs_api.h"

extern "C" const chorus::VerbsApi* chorus_emulation_soft_verbs(bool onDemandPaging) {
  return chorus::softVerbs(onDemandPaging);
}
