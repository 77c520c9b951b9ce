#include "transports/ib/verbs_api.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/emulation_library.h"

namespace chorus {
namespace {

// The symbols the loaded library gives; the data-path verbs are inline functions of the header that call through
// the context's ops, so they need no symbol.
struct Symbols {
  int (*queryPort)(ibv_context*, uint8_t, ibv_port_attr*) = nullptr;
};
Symbols symbols;

int queryPortCompat(ibv_context* context, uint8_t port, ibv_port_attr* attr) {
  // The header's ibv_query_port: the extended op where the provider has one, else the exported compat call.
  verbs_context* vctx = verbs_get_ctx_op(context, query_port);
  if (vctx) return vctx->query_port(context, port, attr, sizeof(*attr));
  std::memset(attr, 0, sizeof(*attr));
  return symbols.queryPort(context, port, attr);
}

int (*queryDeviceSymbol)(ibv_context*, ibv_device_attr*) = nullptr;
int queryDeviceEx(ibv_context* context, ibv_device_attr_ex* attr) {
  // The header's ibv_query_device_ex, with its fallback through the table instead of a link-time symbol.
  verbs_context* vctx = verbs_get_ctx_op(context, query_device_ex);
  if (vctx) {
    int ret = vctx->query_device_ex(context, nullptr, attr, sizeof(*attr));
    if (ret != EOPNOTSUPP && ret != ENOSYS) return ret;
  }
  std::memset(attr, 0, sizeof(*attr));
  return queryDeviceSymbol(context, &attr->orig_attr);
}

int (*queryGidExSymbol)(ibv_context*, uint32_t, uint32_t, ibv_gid_entry*, uint32_t, size_t) = nullptr;
int queryGidEx(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry, uint32_t flags) {
  return queryGidExSymbol(context, port, index, entry, flags, sizeof(*entry));
}

int reqNotifyCq(ibv_cq* cq, int solicitedOnly) { return ibv_req_notify_cq(cq, solicitedOnly); }
int pollCq(ibv_cq* cq, int n, ibv_wc* wc) { return ibv_poll_cq(cq, n, wc); }
int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) { return ibv_post_send(qp, wr, bad); }
int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) { return ibv_post_recv(qp, wr, bad); }

template <typename F>
bool load(void* lib, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out && missing->empty()) *missing = name;
  return *out != nullptr;
}

}  // namespace

bool loadVerbs(const char* name, VerbsApi* out, std::string* whyNot) {
  VerbsApi api{};
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    *whyNot = std::string(name) + " could not be loaded (" + (err ? err : "unknown error") +
              "; install rdma-core's libibverbs1)";
    return false;
  }
  std::string missing;
  api.origin = "libibverbs.so.1";
  load(lib, "ibv_get_device_list", &api.getDeviceList, &missing);
  load(lib, "ibv_free_device_list", &api.freeDeviceList, &missing);
  load(lib, "ibv_get_device_name", &api.getDeviceName, &missing);
  load(lib, "ibv_open_device", &api.openDevice, &missing);
  load(lib, "ibv_close_device", &api.closeDevice, &missing);
  load(lib, "ibv_query_device", &api.queryDevice, &missing);
  queryDeviceSymbol = api.queryDevice;
  api.queryDeviceEx = queryDeviceEx;
  load(lib, "ibv_query_port", &symbols.queryPort, &missing);
  api.queryPort = queryPortCompat;
  load(lib, "ibv_query_gid", &api.queryGid, &missing);
  std::string optional;
  api.queryGidEx = load(lib, "_ibv_query_gid_ex", &queryGidExSymbol, &optional) ? queryGidEx : nullptr;
  load(lib, "ibv_alloc_pd", &api.allocPd, &missing);
  load(lib, "ibv_dealloc_pd", &api.deallocPd, &missing);
  load(lib, "ibv_reg_mr", &api.regMr, &missing);
  load(lib, "ibv_reg_dmabuf_mr", &api.regDmabufMr, &optional);
  load(lib, "ibv_dereg_mr", &api.deregMr, &missing);
  load(lib, "ibv_create_comp_channel", &api.createCompChannel, &missing);
  load(lib, "ibv_destroy_comp_channel", &api.destroyCompChannel, &missing);
  load(lib, "ibv_create_cq", &api.createCq, &missing);
  load(lib, "ibv_destroy_cq", &api.destroyCq, &missing);
  load(lib, "ibv_get_cq_event", &api.getCqEvent, &missing);
  load(lib, "ibv_ack_cq_events", &api.ackCqEvents, &missing);
  api.reqNotifyCq = reqNotifyCq;
  api.pollCq = pollCq;
  load(lib, "ibv_create_qp", &api.createQp, &missing);
  load(lib, "ibv_modify_qp", &api.modifyQp, &missing);
  load(lib, "ibv_destroy_qp", &api.destroyQp, &missing);
  api.postSend = postSend;
  api.postRecv = postRecv;
  load(lib, "ibv_get_async_event", &api.getAsyncEvent, &missing);
  load(lib, "ibv_ack_async_event", &api.ackAsyncEvent, &missing);
  load(lib, "ibv_wc_status_str", &api.wcStatusStr, &missing);
  load(lib, "ibv_event_type_str", &api.eventTypeStr, &missing);
  if (!missing.empty()) {
    *whyNot = std::string(name) + " lacks " + missing + " (rdma-core too old)";
    dlclose(lib);
    return false;
  }
  *out = api;  // the library stays loaded: its providers hold state for the process's life
  return true;
}

const VerbsApi* systemVerbs(std::string* whyNot) {
  static std::once_flag once;
  static VerbsApi loaded;
  static const VerbsApi* api = nullptr;
  static std::string why;
  std::call_once(once, [] { api = loadVerbs("libibverbs.so.1", &loaded, &why) ? &loaded : nullptr; });
  if (!api && whyNot) *whyNot = why;
  return api;
}

const VerbsApi* emulatedVerbs(bool onDemandPaging) {
  static const auto entry = reinterpret_cast<decltype(&chorus_emulation_soft_verbs)>(
      emulationEntry("chorus_emulation_soft_verbs", "CHORUS_IB_EMULATION"));
  return entry(onDemandPaging);
}

}  // namespace chorus
