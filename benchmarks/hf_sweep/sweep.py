#!/usr/bin/env python3
"""The Hugging Face causal-LM sweep: every architecture transformers ships, through backend="neuron".

    python3 benchmarks/hf_sweep/sweep.py                 # all (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    python3 benchmarks/hf_sweep/sweep.py gpt2 llama      # some
    python3 benchmarks/hf_sweep/sweep.py --jobs 2 --timeout 300
    python3 benchmarks/hf_sweep/sweep.py --lnc 2           # every graph split over two physical cores

Architectures run in worker processes (worker.py), one after another in each (the
imports are paid once), under a per-architecture timeout and a memory limit: an
architecture that crashes or hangs its process is recorded as such and a fresh
process takes the rest, so nothing is fatal. Writes the HF section of
benchmarks/RESULTS.md (between the hf-sweep markers; the rest of the file is kept)
and every record to benchmarks/RESULTS-hf.json. Run after scripts/build.sh
(trnc installed) with transformers installed (scripts/setup.sh pins it).
Compile caches are off (TRNC_DISABLE_CACHE=1) so compile times are cold, and every
simulated run is race-checked (TRNC_RACE_CHECK=1, as in the tests).
With --lnc 2 every graph is compiled with options={"lnc": 2} (docs/distributed.md,
"LNC=2"); its records go to RESULTS-hf-lnc2.json unless --json says otherwise, and
RESULTS.md (whose section is the lnc=1 sweep) is not touched.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from results_md import passed, write_results  # noqa: E402

MEMORY_LIMIT = 16 << 30  # bytes of address space per worker: a runaway config is killed, not the machine


def _limit_memory() -> None:
    os.setsid()  # own process group: a timeout kills the worker and anything it started
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _read(path: str):
    try:
        with open(path) as f:
            return json.load(f) if path.endswith(".json") else f.read()
    except (OSError, ValueError):
        return None


def run_queue(archs: list[str], timeout: float, all_unsupported: bool, lnc: int, report) -> None:
    """Run `archs` in worker processes, one after another in each; an architecture that
    crashes its process or passes `timeout` is recorded and a fresh process takes the rest."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", OMP_NUM_THREADS="1",
               TRNC_DISABLE_CACHE="1")
    env.setdefault("TRNC_RACE_CHECK", "1")  # as in the tests: semaphores and scratch checked
    todo = list(archs)
    while todo:
        with tempfile.TemporaryDirectory(prefix="hf-sweep-") as tmp:
            cmd = [sys.executable, os.path.join(HERE, "worker.py"), tmp, *todo]
            if all_unsupported:
                cmd.append("--all-unsupported")
            if lnc != 1:
                cmd.append(f"--lnc={lnc}")
            with open(os.path.join(tmp, "stderr"), "w+") as err:
                proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                        preexec_fn=_limit_memory, cwd=tmp)
                current, since = None, time.perf_counter()
                timed_out = False
                while proc.poll() is None:
                    time.sleep(0.5)
                    now_arch = _read(os.path.join(tmp, "current"))
                    if now_arch != current and now_arch in todo:
                        # The worker goes in order: everything before now_arch has finished
                        # (a fast one may have come and gone between two polls).
                        for arch in todo[: todo.index(now_arch)]:
                            _finish(tmp, arch, time.perf_counter() - since if arch == current else 0.0,
                                    report, todo)
                        current, since = now_arch, time.perf_counter()
                    elif current is not None and time.perf_counter() - since > timeout:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        timed_out = True
                err.seek(0)
                tail = [line for line in err.read().strip().splitlines() if line.strip()][-1:] or [""]
            last = _read(os.path.join(tmp, "current"))
            current = last if last in todo else (current if current in todo else todo[0])
            problem = None
            if timed_out:
                problem = {"kind": "timeout", "message": f"no result after {timeout:.0f} s"}
            elif proc.returncode != 0:
                how = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
                       else f"exit status {proc.returncode}")
                problem = {"kind": "crash", "message": f"{how}: {tail[0][:200]}"}
            if problem is not None:
                for arch in todo[: todo.index(current)]:  # finished before the crash or hang
                    _finish(tmp, arch, 0.0, report, todo)
                _finish(tmp, current, time.perf_counter() - since, report, todo, problem)
                continue  # a fresh worker takes the rest
            for arch in list(todo):  # a clean exit: every record is final
                record = _read(os.path.join(tmp, f"{arch}.json")) or {}
                done = record.get("stage") == "done" or "error" in record
                _finish(tmp, arch, time.perf_counter() - since if arch == current else 0.0, report, todo,
                        None if done else {"kind": "crash", "message": "no record from the worker"})


def _finish(tmp: str, arch: str, seconds: float, report, todo: list[str], problem=None) -> None:
    if arch not in todo:
        return
    todo.remove(arch)
    record = _read(os.path.join(tmp, f"{arch}.json")) or {
        "arch": arch, "stage": "start", "forward_ok": False, "backward_ok": False}
    record["wall_s"] = round(seconds, 1)
    if problem is not None:
        stage = record.get("stage")
        record["error"] = {"operator": "", "stage": stage, **problem,
                           "message": f"{problem['message']} (in stage {stage})"}
        record["forward_ok"] = record.get("forward_ok", False) and stage != "forward"
        record["backward_ok"] = False
    report(record)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archs", nargs="*", help="model types (default: every causal-LM architecture)")
    parser.add_argument("--jobs", type=int, default=1, help="parallel workers (2 cores: 1 or 2)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per architecture")
    parser.add_argument("--all-unsupported", action="store_true",
                        help="for failures also list every operator that would not lower (slower)")
    parser.add_argument("--lnc", type=int, choices=(1, 2), default=1,
                        help="logical NeuronCore degree every graph is compiled for (default 1)")
    parser.add_argument("--json", default=None,
                        help="records file (default benchmarks/RESULTS-hf.json, RESULTS-hf-lnc2.json at --lnc 2)")
    parser.add_argument("--results-md", default=os.path.join(os.path.dirname(HERE), "RESULTS.md"))
    parser.add_argument("--no-md", action="store_true", help="do not touch RESULTS.md")
    args = parser.parse_args()
    if args.json is None:
        name = "RESULTS-hf.json" if args.lnc == 1 else f"RESULTS-hf-lnc{args.lnc}.json"
        args.json = os.path.join(os.path.dirname(HERE), name)
    if args.lnc != 1:
        args.no_md = True  # RESULTS.md's section is the lnc=1 sweep

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import machine  # benchmarks/machine.py (results_md puts benchmarks/ on the path)
    import tiny

    archs = args.archs or tiny.all_model_types()
    records: dict[str, dict] = {}
    previous_meta: dict = {}
    if args.archs and os.path.exists(args.json):  # a partial run updates the previous one's records
        with open(args.json) as f:
            previous = json.load(f)
        records = {r["arch"]: r for r in previous["records"]}
        previous_meta = {k: v for k, v in previous.get("meta", {}).items() if k != "update"}
        if previous_meta.get("lnc", 1) != args.lnc:
            parser.error(f"{args.json} holds a sweep at lnc={previous_meta.get('lnc', 1)}: "
                         f"a partial run at --lnc {args.lnc} would mix the two (name another --json)")
    start = time.perf_counter()
    lock = threading.Lock()

    def report(record: dict) -> None:
        with lock:
            records[record["arch"]] = record
            status = "PASS" if passed(record) else ("skip" if record.get("skipped") else "fail")
            err = record.get("error") or {}
            print(f"[{len(records)}] {record['arch']:28s} {status}  {record.get('wall_s', 0):6.1f}s  "
                  f"{err.get('kind', '')} {err.get('operator', '')}", flush=True)

    jobs = max(1, min(args.jobs, 2))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda q: run_queue(q, args.timeout, args.all_unsupported, args.lnc, report),
                      [archs[i::jobs] for i in range(jobs)]))
    ordered = [records[a] for a in sorted(records)]
    meta = {"seconds": round(time.perf_counter() - start, 1), "jobs": args.jobs, "timeout": args.timeout,
            "archs_run": len(archs), "lnc": args.lnc, "commit": machine.commit(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if previous_meta:  # the full run's facts stay; this run is recorded as an update of some records
        meta = {**previous_meta, "update": {**meta, "archs": sorted(archs)}}
    with open(args.json, "w") as f:
        json.dump({"meta": meta, "records": ordered}, f, indent=1, default=str)
    summary = write_results(ordered, meta, None if args.no_md else args.results_md)
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
