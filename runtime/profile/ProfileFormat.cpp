//===- ProfileFormat.cpp - Short text for profile numbers and operands -----===//
//
// See ProfileFormat.h. Plain snprintf formatting: the texts are for people
// (trace slice args, the summary), never parsed back.
//
//===----------------------------------------------------------------------===//

#include "profile/ProfileFormat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trnc::profile {
namespace {

std::string printf1(const char *fmt, double v, const char *unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v, unit);
  return buf;
}

/// True when the free dims are row-major contiguous (innermost stride 1).
bool contiguous(const isa::AccessPattern &ap) {
  int64_t expect = 1;
  for (int d = int(ap.numDims) - 1; d >= 0; --d) {
    if (ap.count[d] != 1 && ap.stride[d] != expect)
      return false;
    expect *= ap.count[d];
  }
  return true;
}

std::string freeDimsText(const isa::AccessPattern &ap) {
  std::string s = "[";
  for (unsigned d = 0; d < ap.numDims && d < isa::kMaxFreeDims; ++d)
    s += (d ? "x" : "") + std::to_string(ap.count[d]);
  s += "]";
  if (!contiguous(ap)) {
    s += " strides(";
    for (unsigned d = 0; d < ap.numDims && d < isa::kMaxFreeDims; ++d)
      s += (d ? "," : "") + std::to_string(ap.stride[d]);
    s += ")";
  }
  return s;
}

} // namespace

std::string operandText(const isa::AccessPattern &ap) {
  if (!ap.present())
    return "";
  std::string dtype(isa::dtypeName(ap.dtype));
  if (ap.mem == isa::MemKind::HBM)
    return "hbm#" + std::to_string(ap.region) + " +" + std::to_string(ap.offset) + " " + dtype +
           " " + std::to_string(ap.partitionCount) + "x" + freeDimsText(ap) + " pstride " +
           std::to_string(ap.partitionStride);
  return std::string(isa::memKindName(ap.mem)) + "[" + std::to_string(ap.partitionStart) + ":" +
         std::to_string(ap.partitionStart + ap.partitionCount) + "] +" +
         std::to_string(ap.offset) + " " + dtype + " " + freeDimsText(ap);
}

std::string waitsText(const isa::Instruction &inst) {
  std::string s;
  for (unsigned i = 0; i < inst.numWaits && i < isa::kMaxWaits; ++i) {
    const isa::SemaphoreWait &w = inst.waits[i];
    if (w.semaphore == isa::kNoSemaphore)
      continue;
    s += (s.empty() ? "s" : ", s") + std::to_string(w.semaphore) + ">=" + std::to_string(w.value);
  }
  return s;
}

std::string signalText(const isa::Instruction &inst) {
  return inst.signal == isa::kNoSemaphore ? "" : "s" + std::to_string(inst.signal);
}

const SourceLoc *sourceOf(const Program &program, uint32_t sourceIndex) {
  return sourceIndex < program.sources.size() ? &program.sources[sourceIndex] : nullptr;
}

std::string sourceText(const SourceLoc &loc) {
  std::string s = loc.op.empty() ? "?" : loc.op;
  if (!loc.node.empty())
    s += " '" + loc.node + "'";
  if (!loc.file.empty())
    s += " at " + loc.file + ":" + std::to_string(loc.line);
  return s;
}

std::string formatNs(double ns) {
  double a = std::fabs(ns);
  if (a < 1e3)
    return printf1("%.0f %s", ns, "ns");
  if (a < 1e6)
    return printf1("%.3g %s", ns / 1e3, "us");
  if (a < 1e9)
    return printf1("%.3g %s", ns / 1e6, "ms");
  return printf1("%.3g %s", ns / 1e9, "s");
}

std::string formatBytes(double bytes) {
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return printf1("%.0f %s", bytes, "B");
  double v = bytes / 1024;
  unsigned u = 0;
  while (v >= 1024 && u + 1 < 4) {
    v /= 1024;
    ++u;
  }
  return printf1("%.3g %s", v, units[u]);
}

std::string formatCount(double value, const char *unit) {
  static const char *prefixes[] = {"", "k", "M", "G", "T", "P"};
  unsigned p = 0;
  while (std::fabs(value) >= 1000 && p + 1 < 6) {
    value /= 1000;
    ++p;
  }
  std::string u = std::string(prefixes[p]) + unit;
  return printf1("%.3g %s", value, u.c_str());
}

std::string formatPercent(double fraction) {
  return printf1("%.1f%s", fraction * 100, "%");
}

std::string bucketLabel(unsigned log2Bytes) {
  static const char *suffix[] = {"", "K", "M", "G", "T"};
  unsigned s = std::min(log2Bytes / 10, 4u);
  return std::to_string(1ull << (log2Bytes - 10 * s)) + suffix[s];
}

} // namespace trnc::profile
