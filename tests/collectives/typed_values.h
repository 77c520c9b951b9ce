// Test data for every datatype: deterministic small-integer inputs per (rank, index) and their exact reductions.
//
// Inputs are small integers (scaled by a power of two in the wide types, so that truncation to a narrower type
// would show) chosen so that every partial result of every op over up to 8 ranks is exactly representable in the
// datatype: the library may then reduce in any order and must still match the scalar reference bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "chorus/chorus.h"

namespace chorus::test {

// The value rank `rank` contributes at element `index` of a call reducing with `op` (prod: mostly 1, sometimes
// 2, and -1 in signed types; the others: [-4, 4] or [0, 8] times a per-type scale, fp8 [-2, 2] or [-1, 1]). salt
// varies it per call.
int64_t inputValue(chorusDataType_t type, chorusRedOp_t op, int rank, size_t index, uint32_t salt);

// op applied exactly to two values (chorusAvg accumulates the sum; encodeAverage divides).
int64_t combineExact(chorusRedOp_t op, int64_t a, int64_t b);

// Stores v as one element of type at dst (integers wrap modulo 2^bits, as the library's integer ops do).
void encodeValue(chorusDataType_t type, int64_t v, void* dst);

// Stores sum / nranks as chorusAvg computes it for type: integers truncate toward zero, float and double divide
// in their own type, float16/bfloat16/fp8 divide in float and round to nearest even.
void encodeAverage(chorusDataType_t type, int64_t sum, int nranks, void* dst);

// Stores the reference result of op over nranks whose exact combination is `exact`.
void encodeReduced(chorusDataType_t type, chorusRedOp_t op, int64_t exact, int nranks, void* dst);

// One element at p, readable: its value and its bits ("-3 (0xfd)").
std::string formatElement(chorusDataType_t type, const void* p);

}  // namespace chorus::test
