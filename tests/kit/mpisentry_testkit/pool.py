"""Runs jobs concurrently, at most `jobs` at once, with a progress line."""
import sys
import time


class Pool:
    """pool.run(items, start, finish): start(item) gives a Job (or None: nothing to run);
    finish(item, job, run) is called as each ends and may return items to run next (first).
    Ctrl-C kills the running jobs' groups and re-raises; the finished items stay done."""

    def __init__(self, jobs=2, progress=True, stream=sys.stderr):
        self.jobs = max(1, jobs)
        self.progress = progress
        self.stream = stream
        self.running = []

    def run(self, items, start, finish, total=None):
        pending = list(items)
        total = total if total is not None else len(pending)
        done = 0
        started = time.monotonic()
        try:
            while pending or self.running:
                while pending and len(self.running) < self.jobs:
                    item = pending.pop(0)
                    job = start(item)
                    if job is not None:
                        self.running.append((item, job))
                time.sleep(0.02)
                for entry in list(self.running):
                    item, job = entry
                    result = job.poll()
                    if result is None:
                        continue
                    self.running.remove(entry)
                    more = finish(item, job, result) or []
                    pending[:0] = list(more)
                    done += 1
                    if self.progress and self.stream is not None and self.stream.isatty():
                        self.stream.write(f"\r[{time.monotonic() - started:.0f}s] {done} done, "
                                          f"{len(self.running)} running, {len(pending)} waiting of {total}\033[K")
                        self.stream.flush()
        except KeyboardInterrupt:
            self.kill_all()
            raise
        finally:
            if self.progress and self.stream is not None and self.stream.isatty():
                self.stream.write("\r\033[K")
                self.stream.flush()

    def kill_all(self):
        for _, job in self.running:
            job.kill_group()
        self.running = []
