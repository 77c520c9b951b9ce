// The verbs the IB transport calls, as one table of function pointers (NCCL's ibvwrap): filled from the system's
// libibverbs, loaded with dlopen so that Chorus builds and runs where rdma-core is absent, or from the software
// verbs device (emulation/verbs/, outside libchorus.so) that tests use on machines without RDMA. Nothing else calls
// ibv_* directly.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace chorus {

struct VerbsApi {
  const char* origin;  // "libibverbs.so.1" or "chorus soft verbs", for messages
  ibv_device** (*getDeviceList)(int* count);
  void (*freeDeviceList)(ibv_device** list);
  const char* (*getDeviceName)(ibv_device* device);
  ibv_context* (*openDevice)(ibv_device* device);
  int (*closeDevice)(ibv_context* context);
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr);
  // Extended attributes (on-demand paging capabilities); the basic ones, the rest zero, where the provider lacks it.
  int (*queryDeviceEx)(ibv_context* context, ibv_device_attr_ex* attr);
  int (*queryPort)(ibv_context* context, uint8_t port, ibv_port_attr* attr);
  int (*queryGid)(ibv_context* context, uint8_t port, int index, ibv_gid* gid);
  // The GID's type (RoCE v1 or v2) and the network device it belongs to; null where the library predates it.
  int (*queryGidEx)(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry, uint32_t flags);
  ibv_pd* (*allocPd)(ibv_context* context);
  int (*deallocPd)(ibv_pd* pd);
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access);
  // Registers a dma-buf (device memory); null where the library predates it.
  ibv_mr* (*regDmabufMr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access);
  int (*deregMr)(ibv_mr* mr);
  ibv_comp_channel* (*createCompChannel)(ibv_context* context);
  int (*destroyCompChannel)(ibv_comp_channel* channel);
  ibv_cq* (*createCq)(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel, int vector);
  int (*destroyCq)(ibv_cq* cq);
  int (*getCqEvent)(ibv_comp_channel* channel, ibv_cq** cq, void** cqContext);
  void (*ackCqEvents)(ibv_cq* cq, unsigned count);
  int (*reqNotifyCq)(ibv_cq* cq, int solicitedOnly);
  int (*pollCq)(ibv_cq* cq, int entries, ibv_wc* wc);
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int mask);
  int (*destroyQp)(ibv_qp* qp);
  int (*postSend)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  int (*postRecv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  int (*getAsyncEvent)(ibv_context* context, ibv_async_event* event);
  void (*ackAsyncEvent)(ibv_async_event* event);
  const char* (*wcStatusStr)(ibv_wc_status status);
  const char* (*eventTypeStr)(ibv_event_type type);
};

// The system's libibverbs, loaded once and kept for the process's life; null (with *whyNot saying why, e.g.
// "libibverbs.so.1 not found: ...") where it cannot be loaded or lacks a verb the transport needs.
const VerbsApi* systemVerbs(std::string* whyNot);
// Loads `library` into *api: false, with *whyNot, where it cannot (what systemVerbs does once; tests name others).
bool loadVerbs(const char* library, VerbsApi* api, std::string* whyNot);

// The software verbs device's table (CHORUS_IB_EMULATION=1), from this program or libchorus_emulation.so
// (core/emulation_library.h); throws chorusInvalidArgument, naming the setting and the file, where neither has it.
// onDemandPaging false: the same device reporting no ODP.
const VerbsApi* emulatedVerbs(bool onDemandPaging = true);

}  // namespace chorus

// The software verbs device's entry point (emulation/verbs/verbs_entry.cc), which emulatedVerbs looks up by name;
// declared here so that its definition is checked against the type it is called with.
extern "C" [[gnu::visibility("default")]] const chorus::VerbsApi* chorus_emulation_soft_verbs(bool onDemandPaging);
