// Every frame tag Chorus reserves for itself, in one place. A call's own frames carry tags below
// kFirstReservedTag (the communicator builds them so); everything from there up belongs to this list.
#pragma once

#include <cstdint>

namespace chorus::reserved_tags {

inline constexpr uint32_t kFirstReservedTag = 0xffffff00u;

// TCP: the empty frame a rank sends on every connection when it destroys its communicator.
inline constexpr uint32_t kGoodbye = 0xffffffffu;
// TCP: the empty frame a rank sends when it abandons the communicator after an error or an abort.
inline constexpr uint32_t kAbandon = 0xfffffffeu;
// The link probe's frames (CHORUS_TOPO_PROBE, at init, before any call).
inline constexpr uint32_t kLinkProbe = 0xfffffff0u;
// Traces: the clock offset round trips at init (clock_offset.h), between rank 0 and ranks on other machines.
inline constexpr uint32_t kClockOffset = 0xffffffefu;
// CUDA IPC: the control messages (announcements, credits) on the host connection under the device connection.
inline constexpr uint32_t kIpcControl = 0xffffffe1u;
// Windows (chorus.h's put and signal): every frame on a communicator's window connections.
inline constexpr uint32_t kWindow = 0xffffffe2u;
// Device connections: the setup messages (ring offers, mapping results) on the host connections.
inline constexpr uint32_t kDeviceSetup = 0xffffffe0u;

static_assert(kDeviceSetup >= kFirstReservedTag && kWindow >= kFirstReservedTag && kIpcControl >= kFirstReservedTag &&
              kLinkProbe >= kFirstReservedTag && kClockOffset >= kFirstReservedTag && kAbandon >= kFirstReservedTag);

}  // namespace chorus::reserved_tags
