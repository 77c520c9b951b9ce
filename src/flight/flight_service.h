// The process's side of the flight recorders: the communicators alive in it, one listener thread that answers
// chorus-inspect with their records (started with the first communicator), and the signals that dump them
// (SIGUSR1: the handler wakes the listener thread, which writes the files; a fatal signal: the handler writes them
// itself, best effort). The handlers are installed only where CHORUS_FLIGHT_DIR asks for dumps, and only for
// signals the application left at their default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus {

class CommFlight;

namespace flight_service {

// A communicator's recorder comes and goes (its destructor removes it before the memory goes).
void add(CommFlight* flight, bool dumps);
void remove(CommFlight* flight);
// The listener's TCP port (0: none could be opened; then no card is published).
uint16_t listenerPort();
// The process's inspect token (32 hex digits, random per process): the listener answers only a request that carries
// it, and only the job's store hands it out (in the cards, behind the job's secret), so a port found by scanning
// tells nothing.
const std::string& listenerToken();
// The answer to an inspector: {"format":"chorus-inspect/1","host":...,"pid":...,"comms":[records]}.
std::string answer(size_t newestPerComm);
// Writes every registered communicator's dump file (SIGUSR1's work).
void dumpAll(const char* why);

// The request line an inspector sends, "chorus-inspect/1 token=T newest=K", and how many calls per communicator it
// asks for by default.
std::string requestLine(const std::string& token, size_t newest);
inline constexpr size_t kDefaultNewest = 16;

}  // namespace flight_service
}  // namespace chorus
