// Unpredictable bytes from the kernel (getrandom), for nonces and generated secrets.
#pragma once

#include <cstdint>
#include <span>

namespace chorus {

// Fills out from getrandom(2), waiting for the pool if it is not yet initialised; throws chorusSystemError.
void fillRandom(std::span<uint8_t> out);

}  // namespace chorus
