"""The test kit of mpisentry's scripts and ctest tests: one job runner (a process group
under a hard timeout), one pool that runs jobs concurrently with a progress line, one
reader of the checker's JSON report (docs/report-schema.md).
Reached through PYTHONPATH=tests/kit (ctest's ENVIRONMENT, the scripts' wrappers)."""
from .jobs import Job, Run, run, descendants          # noqa: F401
from .pool import Pool                                # noqa: F401
from .report import Verdict, read_report, read_reports, FATAL   # noqa: F401
