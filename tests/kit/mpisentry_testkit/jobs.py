"""One job: a process in its own process group (setsid) under a hard time limit, killed
as a group with os.killpg on timeout or Ctrl-C. Only the processes it started (and their
descendants, found through /proc) are ever signalled, never processes found by name."""
import dataclasses
import os
import signal
import subprocess
import time
from pathlib import Path


@dataclasses.dataclass
class Run:
    status: int               # exit status, None on timeout
    seconds: float            # wall time
    stdout: str
    stderr: str

    @property
    def timed_out(self):
        return self.status is None


class Job:
    """A started job; poll() gives its Run once it ended or was killed at time_limit.
    out_base: its stdout and stderr go to out_base.out and .err (kept), else to temporary files."""

    def __init__(self, command, env=None, cwd=None, time_limit=60.0, out_base=None):
        self.command = command
        self.time_limit = time_limit
        if out_base is None:
            import tempfile
            self.stdout, self.stderr = tempfile.NamedTemporaryFile("w+"), tempfile.NamedTemporaryFile("w+")
        else:
            self.stdout, self.stderr = open(f"{out_base}.out", "w+"), open(f"{out_base}.err", "w+")
        self.started = time.monotonic()
        self.process = subprocess.Popen(command, env=env, cwd=cwd, stdout=self.stdout,
                                        stderr=self.stderr, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        self.timed_out = False
        self.result = None

    @property
    def pid(self):
        return self.process.pid

    def poll(self):
        """The finished Run, or None while the job runs; kills the job past its time limit."""
        if self.result is not None:
            return self.result
        if self.process.poll() is None:
            if time.monotonic() - self.started < self.time_limit:
                return None
            self.timed_out = True
            self.kill_group()
        seconds = time.monotonic() - self.started
        self.stdout.seek(0)
        self.stderr.seek(0)
        self.result = Run(None if self.timed_out else self.process.returncode, seconds,
                          self.stdout.read(), self.stderr.read())
        self.stdout.close()
        self.stderr.close()
        return self.result

    def wait(self):
        try:
            while True:
                result = self.poll()
                if result is not None:
                    return result
                time.sleep(0.02)
        except KeyboardInterrupt:
            self.kill_group()
            raise

    def kill_group(self, grace=5.0):
        """SIGTERM to the job's process group (mpiexec then ends its ranks), then SIGKILL to
        the group and to whatever is left of the job: hydra starts its proxy and every rank
        with setsid, so they are found as the job's descendants, not as members of its group."""
        job = descendants(self.process.pid)
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(grace)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        job |= descendants(self.process.pid)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in job:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()


def run(command, time_limit, env=None, cwd=None, out_base=None):
    """Runs one job to its end or its time limit: its Run."""
    return Job(command, env, cwd, time_limit, out_base).wait()


def descendants(root):
    """The pids of root's descendants, from /proc."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, frontier = set(), [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found
