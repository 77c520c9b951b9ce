// The rendezvous key-value store (served by rank 0 or chorusrun) through which ranks find each other.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"

namespace chorus {

using Bytes = std::vector<uint8_t>;
// A value from text and back: most of what Chorus stores is text.
inline Bytes bytesOf(std::string_view text) { return Bytes(text.begin(), text.end()); }
inline std::string textOf(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }

// Serves the store on a background thread (Asio) until destroyed. Clients must present jobId and, when
// the server has a secret, prove that they know it (HMAC challenge-response, core/security/channel_auth.h) before
// anything is served; a client that cannot is refused and logged at WARN, and the server serves on.
// A connection that has not completed its HELLO (and authentication) within kHelloSeconds is closed, and at most
// kMaxPendingConnections such connections are open at once (more wait in the kernel's backlog).
class StoreServer {
 public:
  static constexpr double kHelloSeconds = 10.0;
  static constexpr int kMaxPendingConnections = 64;

  // Binds bindHost:port (port 0: any free port) and starts serving; throws chorusSystemError naming the address.
  // The secret is CHORUS_SECRET (params::secret()); empty means clients are not authenticated.
  StoreServer(const std::string& bindHost, uint16_t port, const std::string& jobId);
  // The same with an explicit secret (e.g. chorusrun's generated one, or one carried by a unique id).
  StoreServer(const std::string& bindHost, uint16_t port, const std::string& jobId, const std::string& secret);
  // The same with another bound on HELLO (tests use a short one).
  StoreServer(const std::string& bindHost, uint16_t port, const std::string& jobId, const std::string& secret,
              double helloSeconds);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  // The port actually bound.
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One client connection to the store. Every call is bounded by a deadline; errors name the store address.
class StoreClient {
 public:
  // Connects to host:port, retrying until `deadline` (the server may start later), presents jobId and, when the
  // server asks, proves knowledge of CHORUS_SECRET (params::secret()). rank is only for error messages.
  // Throws chorusTimeout / chorusSystemError / chorusInvalidUsage (job mismatch, secret missing or refused).
  StoreClient(const std::string& host, uint16_t port, const std::string& jobId, int rank, Deadline deadline);
  // The same with an explicit secret. A client with a secret also refuses a server that does not authenticate.
  StoreClient(const std::string& host, uint16_t port, const std::string& jobId, const std::string& secret, int rank,
              Deadline deadline);
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  // Sets key to value (overwrites).
  void set(const std::string& key, const Bytes& value, Deadline deadline);
  // Returns key's value, waiting until some client sets it; throws chorusTimeout naming the key.
  Bytes get(const std::string& key, Deadline deadline);
  // Adds delta to the integer counter at key (created at 0) and returns the new value.
  int64_t add(const std::string& key, int64_t delta, Deadline deadline);
  // True when every key exists (does not wait).
  bool check(const std::vector<std::string>& keys, Deadline deadline);
  // As set, and the key goes when this client's connection closes: when it is destroyed, or its process dies (the
  // kernel closes the connection). How a survivor tells a dead process from a live one that has not spoken yet.
  void setOwned(const std::string& key, const Bytes& value, Deadline deadline);
  // Sets key to `desired` when it holds `expected` (or is missing and `expected` is empty) and returns what it
  // holds afterwards: with expected empty, the first writer's value wins and every caller learns it.
  Bytes compareSet(const std::string& key, const Bytes& expected, const Bytes& desired, Deadline deadline);
  // For each key, whether it exists (does not wait).
  std::vector<bool> checkEach(const std::vector<std::string>& keys, Deadline deadline);
  // Waits until `count` clients have called barrier with the same name.
  void barrier(const std::string& name, int count, Deadline deadline);
  // "host:port", for messages.
  const std::string& address() const;
  // This end's address of the connection (numeric, IPv6 without brackets, a link-local one with its zone): the
  // address the store's host reaches this process by. "" when the connection is closed.
  std::string localHost() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus
