//===- ProfileFormat.h - Short text for profile numbers and operands -*- C++ -*-===//
//
// The small formatting pieces shared by the Chrome trace writer and the human
// summary: an instruction's operands as one short access-pattern text, its
// semaphore waits/signal, its source location, and durations/sizes/rates with
// units. One place, so the trace and the summary name things the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "isa/Isa.h"

#include <cstdint>
#include <string>

namespace trnc::profile {

/// "sbuf[0:128] +1024 bf16 [4x512]" or "hbm#2 +0 f32 128x[64] pstride 64";
/// non-contiguous free strides are appended as " strides(256,1)".
std::string operandText(const isa::AccessPattern &ap);
/// "s3>=2, s7>=1" (empty when the instruction does not wait).
std::string waitsText(const isa::Instruction &inst);
/// "s4" or "" when the instruction signals nothing.
std::string signalText(const isa::Instruction &inst);
/// The source table entry of an instruction, or nullptr when it has none.
const SourceLoc *sourceOf(const Program &program, uint32_t sourceIndex);
/// "aten.mm.default 'mm' at model.py:12" (parts omitted when empty).
std::string sourceText(const SourceLoc &loc);

/// "850 ns", "12.3 us", "4.56 ms", "1.23 s".
std::string formatNs(double ns);
/// "512 B", "64.0 KiB", "3.50 MiB", "1.20 GiB".
std::string formatBytes(double bytes);
/// "1.23 GFLOP" (SI prefixes: k, M, G, T).
std::string formatCount(double value, const char *unit);
/// "12.3%".
std::string formatPercent(double fraction);
/// "4K" style label of a power-of-two size bucket start (1, 2, ..., 512, 1K, ... 1G, 1T).
std::string bucketLabel(unsigned log2Bytes);

} // namespace trnc::profile
