//===- ChromeTrace.h - A simulated run as Chrome/Perfetto trace JSON -*- C++ -*-===//
//
// Turns a Profile's per-instruction records into trace-event JSON that
// chrome://tracing and ui.perfetto.dev load: one track (tid) per engine and
// per DMA queue, each instruction a complete ("X") slice named by opcode,
// with its operands, semaphore waits/signal and source op as args; flows
// from each semaphore's signal to the waits it met; counter tracks of HBM
// bandwidth, DMA transfers in flight and SBUF/PSUM bytes live.
// Timestamps are microseconds of simulated time (the format's unit).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "sim/Profile.h"

#include <string>

namespace trnc::profile {

/// Track ids: engines use their isa::Engine value (0..3; DMA instructions go
/// to their queue's track instead), DMA queue q uses kDmaTrackBase + q.
/// Should the timed model ever overlap two slices on one track, the later
/// slice moves to an extra lane of the same track ("dma queue 3 (lane 2)",
/// tid + kLaneStride * lane) so that every tid stays non-overlapping.
constexpr int kDmaTrackBase = 100;
constexpr int kLaneStride = 1000;

/// The trace of one run of `program`. `pid` and `processName` let callers
/// merge several runs (forward, backward) into one file; the default names
/// the process after the program and target. Without per-instruction
/// records (RunOptions::recordTrace off) the trace has only its metadata.
std::string writeChromeTrace(const Program &program, const Profile &profile, int pid = 1,
                             const std::string &processName = "");

} // namespace trnc::profile
