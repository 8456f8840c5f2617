//===- ProfileBindings.cpp - trnc._C.Profile: a timed run for Python ------===//
//
// See ProfileBindings.h. Numbers are exposed as plain Python values (dicts
// of floats and ints) so trnc.profiling can aggregate them across graphs;
// the trace JSON and the summary text are built on demand (they can be
// large for big programs).
//
//===----------------------------------------------------------------------===//

#include "ProfileBindings.h"

#include "profile/ChromeTrace.h"
#include "profile/Occupancy.h"
#include "profile/Summary.h"

#include <pybind11/stl.h>

#include <string>

namespace py = pybind11;

namespace trnc::python {
namespace {

struct PyProfile {
  py::object owner;         // keeps *program alive
  const Program *program = nullptr;
  Profile profile;
};

py::dict engineDict(const EngineProfile &e) {
  py::dict d;
  d["instructions"] = e.instructions;
  d["busy_ns"] = e.busyNs;
  d["semaphore_wait_ns"] = e.semaphoreWaitNs;
  d["utilisation"] = e.utilisation;
  return d;
}

py::dict engines(const std::array<EngineProfile, isa::kNumEngines> &engines) {
  py::dict d;
  for (unsigned e = 0; e < isa::kNumEngines; ++e)
    d[py::str(std::string(isa::engineName(isa::Engine(e))))] = engineDict(engines[e]);
  return d;
}

/// One engines dict per physical core (one entry at LNC=1).
py::list coreEngines(const Profile &p) {
  py::list l;
  l.append(engines(p.engines));
  for (const auto &peer : p.peerEngines)
    l.append(engines(peer));
  return l;
}

py::list dmaQueues(const Profile &p) {
  py::list l;
  for (const DmaQueueProfile &q : p.dmaQueues) {
    py::dict d;
    d["transfers"] = q.transfers;
    d["bytes"] = q.bytes;
    d["busy_ns"] = q.busyNs;
    l.append(d);
  }
  return l;
}

/// {lower bound in bytes: count} for the non-empty buckets [2^i, 2^(i+1)).
py::dict histogram(const Profile &p) {
  py::dict d;
  for (unsigned i = 0; i < p.dmaSizeHistogram.size(); ++i)
    if (p.dmaSizeHistogram[i])
      d[py::int_(1ull << i)] = p.dmaSizeHistogram[i];
  return d;
}

/// {dtype: {instructions, tensor_flops, useful_flops, peak_flops_per_second}}
/// for the dtypes matmuls ran at (MFU/HFU divide each by its own peak).
py::dict matmulDTypes(const Profile &p) {
  py::dict d;
  for (unsigned t = 0; t < isa::kNumDTypes; ++t) {
    const MatmulDTypeProfile &m = p.matmulByDType[t];
    if (!m.instructions)
      continue;
    py::dict e;
    e["instructions"] = m.instructions;
    e["tensor_flops"] = m.tensorFlops;
    e["useful_flops"] = m.usefulFlops;
    e["peak_flops_per_second"] = m.peakFlopsPerSecond;
    d[py::str(std::string(isa::dtypeName(isa::DType(t))))] = e;
  }
  return d;
}

/// The Tensor Engine peak of every floating-point dtype on this target.
py::dict peaksByDType(const Profile &p) {
  py::dict d;
  for (isa::DType t : {isa::DType::F32, isa::DType::BF16, isa::DType::F16})
    d[py::str(std::string(isa::dtypeName(t)))] = p.matmulByDType[size_t(t)].peakFlopsPerSecond;
  return d;
}

/// Bytes of the program's input or output regions: what a program that reads
/// every input and writes every output exactly once moves to/from HBM.
uint64_t regionBytes(const Program &program, Region::Kind kind) {
  uint64_t bytes = 0;
  for (const Region &r : program.regions)
    if (r.kind == kind)
      bytes += r.bytes;
  return bytes;
}

/// Instructions in the program's streams (static count; the profile's engine
/// counts are the executed ones).
uint64_t programInstructions(const Program &program) {
  uint64_t n = 0;
  for (unsigned c = 0; c < program.lnc(); ++c)
    for (const auto &stream : program.coreStreams(c))
      n += stream.size();
  return n;
}

py::dict toDict(const PyProfile &pp) {
  const Profile &p = pp.profile;
  profile::Verdict v = profile::classify(p);
  py::dict d;
  d["program"] = pp.program->name;
  d["target"] = p.target.empty() ? pp.program->target : p.target;
  d["total_ns"] = p.totalNs;
  // "engines": physical core 0's (the whole program at LNC=1); "cores":
  // every physical core's, core 0 first; "lnc": how many.
  d["lnc"] = p.lnc;
  d["engines"] = engines(p.engines);
  d["cores"] = coreEngines(p);
  d["dma_queues"] = dmaQueues(p);
  d["tensor_flops"] = p.tensorFlops;
  d["useful_matmul_flops"] = p.usefulMatmulFlops;
  d["peak_flops_per_second"] = p.peakFlopsPerSecond;
  d["peak_flops_per_second_by_dtype"] = peaksByDType(p);
  d["matmul_dtypes"] = matmulDTypes(p);
  d["tensor_at_peak_ns"] = p.tensorAtPeakNs;
  d["useful_at_peak_ns"] = p.usefulAtPeakNs;
  d["hfu"] = p.hfu;
  d["mfu"] = p.mfu;
  d["dma_bytes"] = p.dmaBytes;
  d["hbm_bytes"] = p.hbmBytes;
  d["program_input_bytes"] = regionBytes(*pp.program, Region::Kind::Input);
  d["program_output_bytes"] = regionBytes(*pp.program, Region::Kind::Output);
  d["program_instructions"] = programInstructions(*pp.program);
  // Scratch: the regions laid end to end (each 64-byte aligned), and the
  // arena they are packed into by liveness (trnc-pack-scratch), which is
  // what the program reserves.
  d["program_scratch_bytes"] = pp.program->scratchEndToEndBytes();
  d["program_scratch_arena_bytes"] = pp.program->scratchArenaBytes();
  // The allocator's peak bytes per partition (0 for a program without an
  // allocation table).
  d["sbuf_peak_bytes"] = profile::peakAllocatedBytes(*pp.program, Allocation::Space::Sbuf);
  d["psum_peak_bytes"] = profile::peakAllocatedBytes(*pp.program, Allocation::Space::Psum);
  d["peak_hbm_bytes_per_second"] = p.peakHbmBytesPerSecond;
  d["mbu"] = p.mbu;
  d["semaphore_wait_ns"] = p.semaphoreWaitNs;
  d["collectives"] = p.collectives;
  d["collective_bytes"] = p.collectiveBytes;
  d["collective_ns"] = p.collectiveNs;
  d["collective_overlap_ns"] = p.collectiveOverlapNs;
  d["exposed_collective_ns"] = p.exposedCollectiveNs();
  d["dma_size_histogram"] = histogram(p);
  d["verdict"] = profile::verdictName(v.kind);
  d["verdict_reason"] = v.reason;
  d["busiest_engine"] = std::string(isa::engineName(v.busiestEngine));
  d["num_records"] = p.trace.size();
  return d;
}

} // namespace

py::object wrapProfile(py::object owner, const Program &program, Profile profile) {
  return py::cast(PyProfile{std::move(owner), &program, std::move(profile)});
}

void registerProfileBindings(py::module_ &m) {
  py::class_<PyProfile>(m, "Profile",
                        "Simulated time, utilisation and traffic of one run (simulated "
                        "estimates from public hardware facts, not measurements).")
      .def_property_readonly("program", [](const PyProfile &p) { return p.program->name; })
      .def_property_readonly("total_ns", [](const PyProfile &p) { return p.profile.totalNs; })
      .def_property_readonly("lnc", [](const PyProfile &p) { return p.profile.lnc; })
      .def_property_readonly("hfu", [](const PyProfile &p) { return p.profile.hfu; })
      .def_property_readonly("mfu", [](const PyProfile &p) { return p.profile.mfu; })
      .def_property_readonly("mbu", [](const PyProfile &p) { return p.profile.mbu; })
      .def_property_readonly("engines", [](const PyProfile &p) { return engines(p.profile.engines); })
      .def_property_readonly("has_trace", [](const PyProfile &p) { return !p.profile.trace.empty(); })
      .def("to_dict", &toDict, "Every number of the profile as a dict of plain values.")
      .def(
          "trace_json",
          [](const PyProfile &p, int pid, const std::string &processName) {
            return profile::writeChromeTrace(*p.program, p.profile, pid, processName);
          },
          py::arg("pid") = 1, py::arg("process_name") = "",
          "Chrome/Perfetto trace-event JSON (slices only when run with trace=True).")
      .def(
          "summary", [](const PyProfile &p) { return profile::summarize(*p.program, p.profile); },
          "A short human summary ending with the compute/memory/latency-bound verdict.")
      .def("__repr__", [](const PyProfile &p) {
        return "<trnc._C.Profile of '" + p.program->name + "': " +
               std::to_string(p.profile.totalNs) + " simulated ns>";
      });
}

} // namespace trnc::python
