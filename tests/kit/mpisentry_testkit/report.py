"""Reads the checker's JSON report (REPORT-JSON, --report-json; docs/report-schema.md):
the verdicts as data. A rank's own report goes beside it as NAME.rankN.json."""
import dataclasses
import json
from pathlib import Path

SCHEMA = "mpisentry-report/"
FATAL = {"GLOBAL:DEADLOCK:HARD", "GLOBAL:DEADLOCK:POTENTIAL"}


@dataclasses.dataclass
class Verdict:
    check: str                 # GLOBAL:DEADLOCK:HARD, ...
    severity: str              # error, warning, info
    ranks: list                # every rank the report lists
    core: list                 # the deadlocks' ranks (core.ranks)
    cycle: list                # the first cycle
    calls: dict                # rank -> the MPI function its first thread is in ("" when none)
    blocked_seconds: dict      # rank -> seconds blocked in MPI (blocked ranks only)
    aborts_job: bool
    path: str

    @property
    def fatal(self):
        return self.check in FATAL


def _verdict(data, path):
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith(SCHEMA):
        raise ValueError(f"{path}: not an mpisentry JSON report")
    ranks, calls, blocked = [], {}, {}
    for entry in data.get("ranks", []):
        rank = entry.get("rank")
        ranks.append(rank)
        threads = entry.get("threads") or []
        calls[rank] = (threads[0].get("function") or "") if threads else ""
        if entry.get("state") == "blocked" and isinstance(entry.get("seconds"), (int, float)):
            blocked[rank] = entry["seconds"]
    core = data.get("core") or {}
    return Verdict(data["check"], data.get("severity", ""), ranks, core.get("ranks", []),
                   core.get("cycle", []), calls, blocked, bool(data.get("aborts_job")), str(path))


def read_report(path):
    """The verdict of one JSON report file."""
    return _verdict(json.loads(Path(path).read_text()), path)


def read_reports(path):
    """The verdicts of a JSON report and of its ranks' own (NAME.rankN.json); [] when none exists."""
    path = Path(path)
    found = [path] if path.exists() else []
    found += sorted(path.parent.glob(f"{path.stem}.rank*{path.suffix}"))
    return [read_report(p) for p in found]
