"""Unit tests of the test kit (no MPI): the runner, the pool, the JSON report reader.
Run with PYTHONPATH=tests/kit python3 -m unittest tests/kit/test_kit.py (ctest: kit_unit)."""
import os
import signal
import sys
import time
import unittest
from pathlib import Path

from mpisentry_testkit import Job, Pool, read_report, read_reports, run

HERE = Path(__file__).resolve().parent


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class RunnerTest(unittest.TestCase):
    def test_status_output_time(self):
        result = run(["sh", "-c", "echo out; echo err >&2; exit 3"], time_limit=10)
        self.assertEqual(result.status, 3)
        self.assertEqual(result.stdout, "out\n")
        self.assertEqual(result.stderr, "err\n")
        self.assertLess(result.seconds, 5)

    def test_timeout_kills_the_whole_group(self):
        job = Job(["sh", "-c", "sleep 60 & sleep 60"], time_limit=0.5)
        time.sleep(0.2)
        with open(f"/proc/{job.pid}/task/{job.pid}/children") as children:
            sleepers = [int(pid) for pid in children.read().split()]
        # Both sleeps: the background one and the one sh waits in (sh may exec the last).
        group = [pid for pid in sleepers] + [job.pid]
        self.assertGreaterEqual(len(sleepers), 1)
        self.assertEqual(os.getpgid(job.pid), job.pid)      # a group of its own
        result = job.wait()
        self.assertIsNone(result.status)
        self.assertTrue(result.timed_out)
        self.assertLess(result.seconds, 10)
        time.sleep(0.1)
        for pid in group:
            self.assertFalse(alive(pid), f"pid {pid} survived the timeout")

    def test_pool_runs_all_and_concurrently(self):
        finished = []
        started = time.monotonic()
        Pool(jobs=3, progress=False).run(range(3), lambda i: Job(["sleep", "0.5"], time_limit=10),
                                         lambda i, job, result: finished.append((i, result.status)))
        self.assertEqual(sorted(finished), [(0, 0), (1, 0), (2, 0)])
        self.assertLess(time.monotonic() - started, 1.4)


class CommandLineTest(unittest.TestCase):
    def test_run_status_and_timeout(self):
        import subprocess
        import tempfile
        with tempfile.TemporaryDirectory() as work:
            out, err = f"{work}/out", f"{work}/err"
            kit = [sys.executable, "-m", "mpisentry_testkit", "run"]
            ended = subprocess.run(kit + ["10", out, err, "--", "sh", "-c", "echo a; exit 7"])
            self.assertEqual(ended.returncode, 7)
            self.assertEqual(Path(out).read_text(), "a\n")
            stopped = subprocess.run(kit + ["0.3", out, err, "--", "sleep", "30"])
            self.assertEqual(stopped.returncode, 124)
            checks = subprocess.run([sys.executable, "-m", "mpisentry_testkit", "checks",
                                     str(HERE / "sample_hard.json")], capture_output=True, text=True)
            self.assertEqual(checks.stdout, "GLOBAL:DEADLOCK:HARD\n")


class ReportTest(unittest.TestCase):
    # Made by scripts/demo's example: mpisentry --report-json sample_hard.json -n 4 build/examples/deadlock
    SAMPLE = HERE / "sample_hard.json"

    def test_the_demo_deadlock(self):
        verdict = read_report(self.SAMPLE)
        self.assertEqual(verdict.check, "GLOBAL:DEADLOCK:HARD")
        self.assertEqual(verdict.severity, "error")
        self.assertTrue(verdict.fatal)
        self.assertTrue(verdict.aborts_job)
        self.assertEqual(verdict.ranks, [0, 1, 2, 3])
        self.assertEqual(verdict.core, [0, 1, 2, 3])
        self.assertEqual(verdict.cycle, [0, 1, 2, 3, 0])
        self.assertEqual(set(verdict.calls.values()), {"MPI_Ssend"})
        self.assertEqual(sorted(verdict.blocked_seconds), [0, 1, 2, 3])

    def test_reports_with_the_ranks_own(self):
        import shutil
        import tempfile
        with tempfile.TemporaryDirectory() as work:
            shutil.copy(self.SAMPLE, Path(work) / "r.json")
            shutil.copy(self.SAMPLE, Path(work) / "r.rank2.json")
            self.assertEqual(len(read_reports(Path(work) / "r.json")), 2)
            self.assertEqual(read_reports(Path(work) / "none.json"), [])

    def test_not_a_report(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".json") as other:
            other.write('{"schema": "other/1", "check": "x"}')
            other.flush()
            with self.assertRaises(ValueError):
                read_report(other.name)


if __name__ == "__main__":
    unittest.main()
