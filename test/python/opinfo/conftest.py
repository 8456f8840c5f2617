"""The OpInfo sweep's results file: with TRNC_OPINFO_RESULTS=<path>, every
sample outcome of the session is written there as JSON (report.py reads it)."""

import json
import os

import harness


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("TRNC_OPINFO_RESULTS")
    if not path or not harness.RESULTS:
        return
    doc = {
        "full": harness.FULL,
        "samples_per_case": None if harness.FULL else harness.SAMPLES_PER_CASE,
        "outcomes": [o.to_json() for o in harness.RESULTS],
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=0)
