#include "src/flight/flight_service.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/logging.h"
#include "src/flight/comm_flight.h"
#include "src/flight/flight_json.h"

namespace chorus::flight_service {
namespace {

// Communicators alive at once in one process; more are recorded but neither inspected nor dumped.
constexpr int kSlots = 256;
// An inspector has this long to send its request and take the answer: a stuck one never holds the listener long.
constexpr int kRequestMs = 1000, kAnswerMs = 2000;
constexpr size_t kMaxRequestBytes = 128;

std::atomic<CommFlight*> slots[kSlots];
std::mutex registryMutex;        // add, remove and the listener's reads; never a signal handler
std::atomic<int> wakeWrite{-1};  // SIGUSR1's handler writes a byte here
int wakeRead = -1, listenFd = -1;
std::atomic<uint16_t> port{0};
std::string token;  // written once before the listener thread starts, read-only after
std::once_flag listenerStarted, handlersInstalled;
std::atomic<bool> fatalSeen{false};

void onDumpSignal(int) {
  const int saved = errno;
  const int fd = wakeWrite.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const char one = 1;
    ssize_t ignored = write(fd, &one, 1);
    (void)ignored;
  }
  errno = saved;
}

// Only lock-free reads and open/write/rename/close: see flight_dump.h.
void onFatalSignal(int sig) {
  if (!fatalSeen.exchange(true)) {
    for (auto& slot : slots) {
      const CommFlight* f = slot.load(std::memory_order_acquire);
      if (f != nullptr) f->dumpFile().write(f->recorder());
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// A handler for `sig` unless the application has one of its own.
void installIfDefault(int sig, void (*handler)(int), int flags) {
  struct sigaction current {};
  if (sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO) != 0) {
    return;
  }
  struct sigaction mine {};
  mine.sa_handler = handler;
  sigemptyset(&mine.sa_mask);
  mine.sa_flags = flags;
  sigaction(sig, &mine, nullptr);
}

void installHandlers() {
  installIfDefault(SIGUSR1, onDumpSignal, SA_RESTART);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) installIfDefault(sig, onFatalSignal, SA_NODEFER);
}

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits for `events` on fd until the absolute time `until` (ms); false when it passed.
bool waitFor(int fd, short events, int64_t until) {
  for (;;) {
    const int64_t left = until - nowMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(left));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

constexpr const char* kRequestPrefix = "chorus-inspect/1 token=";
constexpr size_t kTokenBytes = 16;

// Compares without stopping at the first difference: how long the refusal takes says nothing of the token.
bool sameToken(const char* given, size_t length) {
  if (token.empty() || length != token.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < length; ++i) differ |= static_cast<unsigned char>(given[i] ^ token[i]);
  return differ == 0;
}

// One inspector: its request line ("chorus-inspect/1 token=T newest=K"), then the answer, each within its bound.
void serve(int fd) {
  char request[kMaxRequestBytes + 1];
  size_t got = 0;
  const int64_t requestUntil = nowMs() + kRequestMs;
  while (got < kMaxRequestBytes && (got == 0 || request[got - 1] != '\n')) {
    if (!waitFor(fd, POLLIN, requestUntil)) return;
    const ssize_t r = recv(fd, request + got, kMaxRequestBytes - got, 0);
    if (r <= 0) {
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return;
    }
    got += static_cast<size_t>(r);
  }
  request[got] = '\0';
  // Anything but an inspector that holds this process's token gets nothing, not even a refusal.
  const size_t prefix = strlen(kRequestPrefix);
  if (strncmp(request, kRequestPrefix, prefix) != 0) return;
  const char* given = request + prefix;
  const char* end = strchr(given, ' ');
  if (end == nullptr || !sameToken(given, static_cast<size_t>(end - given))) return;
  if (strncmp(end, " newest=", 8) != 0) return;
  const size_t newest = strtoull(end + 8, nullptr, 10);
  const std::string text = answer(newest == 0 ? kDefaultNewest : newest);
  size_t sent = 0;
  const int64_t answerUntil = nowMs() + kAnswerMs;
  while (sent < text.size()) {
    if (!waitFor(fd, POLLOUT, answerUntil)) return;
    const ssize_t w = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) return;
    sent += static_cast<size_t>(w);
  }
}

void drain(int fd) {
  char sink[64];
  while (read(fd, sink, sizeof(sink)) > 0) {
  }
}

[[noreturn]] void listen() {
  for (;;) {
    pollfd fds[2] = {{listenFd, POLLIN, 0}, {wakeRead, POLLIN, 0}};
    const int r = poll(fds, 2, -1);
    if (r < 0) continue;  // EINTR: a signal of the application's
    if (fds[1].revents & POLLIN) {
      drain(wakeRead);
      dumpAll("SIGUSR1");
    }
    if (fds[0].revents & POLLIN) {
      const int fd = accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        serve(fd);
        close(fd);
      }
    }
  }
}

// A socket listening on every address of both families, a port the kernel picks; IPv4 alone where the kernel has no
// IPv6. The card names this host's end of the store connection, IPv4 or IPv6 as the store's address made it, and
// one dual-stack socket answers either.
int openListener(uint16_t* boundPort) {
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_storage any{};
  socklen_t length = sizeof(sockaddr_in6);
  if (fd >= 0) {
    const int off = 0;
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) != 0) {
      const int saved = errno;
      close(fd);
      errno = saved;
      return -1;
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&any);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_any;
  } else if (errno == EAFNOSUPPORT) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto* v4 = reinterpret_cast<sockaddr_in*>(&any);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    length = sizeof(sockaddr_in);
  }
  if (fd < 0) return -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&any), length) != 0 || ::listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&any), &length) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  *boundPort = ntohs(any.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&any)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&any)->sin_port);
  return fd;
}

// 32 hex digits from the kernel's random source; empty (no listener) if it has none to give.
std::string randomToken() {
  unsigned char bytes[kTokenBytes];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t r = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return "";
    got += static_cast<size_t>(r);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : bytes) {
    text += kHex[b >> 4];
    text += kHex[b & 15];
  }
  return text;
}

void startListener() {
  int pipeFds[2];
  if (pipe2(pipeFds, O_NONBLOCK | O_CLOEXEC) != 0) {
    CHORUS_WARN(-1, "flight recorder: pipe2: " << std::strerror(errno) << "; no inspect listener, no SIGUSR1 dumps");
    return;
  }
  wakeRead = pipeFds[0];
  wakeWrite.store(pipeFds[1]);
  uint16_t bound = 0;
  token = randomToken();
  if (token.empty()) {
    CHORUS_WARN(-1, "flight recorder: getrandom: " << std::strerror(errno) << "; chorus-inspect cannot ask "
                                                   << "this process");
  } else if ((listenFd = openListener(&bound)) < 0) {
    CHORUS_WARN(-1, "flight recorder: inspect listener: " << std::strerror(errno) << "; chorus-inspect cannot ask "
                                                          << "this process");
  } else {
    port.store(bound);
  }
  // Without a listener the thread still serves SIGUSR1 (poll ignores a negative descriptor). Detached: it owns nothing
  // that needs freeing and must never keep the process from exiting.
  std::thread(listen).detach();
}

}  // namespace

void add(CommFlight* flight, bool dumps) {
  std::call_once(listenerStarted, startListener);
  if (dumps) std::call_once(handlersInstalled, installHandlers);
  std::lock_guard<std::mutex> lock(registryMutex);
  for (auto& slot : slots) {
    CommFlight* expected = nullptr;
    if (slot.compare_exchange_strong(expected, flight)) return;
  }
  CHORUS_WARN(flight->recorder().identity().rank,
              "flight recorder: more than " << kSlots << " communicators in this process; this one is not inspected");
}

void remove(CommFlight* flight) {
  std::lock_guard<std::mutex> lock(registryMutex);
  for (auto& slot : slots) {
    CommFlight* expected = flight;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

uint16_t listenerPort() { return port.load(); }

const std::string& listenerToken() { return token; }

std::string requestLine(const std::string& token, size_t newest) {
  return kRequestPrefix + token + " newest=" + std::to_string(newest) + "\n";
}

std::string answer(size_t newestPerComm) {
  std::string text;
  FlightJsonOut out(&text);
  out.raw("{\"format\":\"chorus-inspect/1\",\"host\":");
  out.quoted(flightProcess().host);
  out.raw(",\"pid\":");
  out.number(flightProcess().pid);
  out.raw(",\"comms\":[");
  bool first = true;
  std::lock_guard<std::mutex> lock(registryMutex);
  for (auto& slot : slots) {
    const CommFlight* f = slot.load();
    if (f == nullptr) continue;
    if (!first) out.raw(",");
    first = false;
    writeFlightJson(f->recorder(), out, newestPerComm);
  }
  out.raw("]}\n");
  return text;
}

void dumpAll(const char* why) {
  std::lock_guard<std::mutex> lock(registryMutex);
  for (auto& slot : slots) {
    const CommFlight* f = slot.load();
    if (f != nullptr) f->dump(why);
  }
}

}  // namespace chorus::flight_service
