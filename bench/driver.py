#!/usr/bin/env python3
"""Runs every mpisentry benchmark once and prints one markdown table.

Started by bench/run after the build. Jobs run one at a time, each with a hard
timeout, in a session of its own. Variants of
a row run interleaved and their results are medians, because the machine is
shared: see bench/README.md for what each row measures and how.
"""

import argparse
import itertools
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

DEADLOCK_TIMEOUT_S = 2.0
DETECTION_REPEATS = {2: 3, 4: 3, 8: 2, 16: 2, 64: 1}
IDLE_SECONDS = 6
IDLE_PAIRS = 2
EXCHANGE_RANKS = [2, 4, 6, 8, 16, 64]
EXCHANGE_SECONDS = 2
SUMMARY_BYTES = 112  # the monitors' per-round record: Summary, kFields = 14 x int64
FRAME_LENGTH_BYTES = 4  # the monitors' channel frames each message: its length, 4 bytes big-endian, then the payload
SUMMARY_FRAME_BYTES = FRAME_LENGTH_BYTES + SUMMARY_BYTES
CALL_COST_THREADS = 4
# Ranks -> (runs, seconds rank 0 computes after "ready"): long enough for the dumps to end well before; longer at
# 64 ranks, where 2 cores run 64 main threads and 64 monitors.
DUMP_RUNS = {2: (3, 6), 16: (3, 10), 64: (2, 30)}
DUMPS_PER_JOB = 2  # the first costs more (one-time setup, such as the symbolizer's): the second shows a later one
DUMP_GAP_S = 1.5  # the checker merges a request that comes within 1 s of a dump into that dump
# What one_computes's other ranks do meanwhile -> how the rows say it.
DUMP_OTHERS = {"wait": "the others wait in MPI_Allreduce (MPICH polls: every core busy)",
               "sleep": "the others sleep outside MPI (the cores left to rank 0 and the checker)"}
DUMP_POLL_S = 0.005  # how often the report file's size is read while a dump is under way
JOB_TIMEOUT_S = 90
READER_TIMEOUT_S = 10  # for the output once the job has ended


# The groups of rows, in the order they run; --only picks some.
GROUPS = ["overhead", "races", "explore", "analyze", "detection", "cpu", "exchange", "dump"]


class JobFailed(Exception):
    pass


@dataclass
class JobResult:
    stdout: str
    stderr: str
    returncode: int
    watched: list[float]  # wall times of the stderr lines with the watched text
    stdout_seen: dict[str, float]  # first word of a stdout line -> wall time of the first such line

    @property
    def watched_at(self) -> float | None:
        return self.watched[0] if self.watched else None


@dataclass
class RunningJob:
    """What a job's watcher (Runner.run's while_running) sees of it."""
    process: subprocess.Popen
    deadline: float  # time.monotonic() by which the watcher must return
    stdout_seen: dict[str, float]  # filled in as the lines arrive
    watched: list[float]  # likewise

    def running(self) -> bool:
        return self.process.poll() is None and time.monotonic() < self.deadline


def process_tree(root: int) -> list[int]:
    """root and its descendants, by pid."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # not a process, or gone meanwhile
        children.setdefault(parent, []).append(int(entry))
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending += children.get(pid, [])
    return tree


def kill_tree(root: int) -> None:
    """Kills a job: hydra puts its proxy and every rank in a session of its own, so killing mpiexec's process
    group would leave them running. Each process is killed by its pid."""
    for pid in process_tree(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # ended meanwhile


@dataclass
class Mpi:
    """The MPI a build is for, read from its CMake cache, and how its mpiexec is told things."""
    name: str
    mpiexec: str
    bind_to_core: list[str]
    env_option: Callable[[str, str], list[str]]

    @staticmethod
    def of_build(build: str) -> "Mpi":
        cache = {}
        with open(os.path.join(build, "CMakeCache.txt")) as lines:
            for line in lines:
                key, _, value = line.rstrip("\n").partition("=")
                cache[key.split(":")[0]] = value
        mpiexec = cache.get("MPIEXEC_EXECUTABLE") or "mpiexec"
        if cache.get("MPISENTRY_BUILT_FOR_OPEN_MPI") == "1":
            with open(os.path.join(os.path.dirname(__file__), "..", "scripts", "openmpi.env")) as settings:
                os.environ.update(line.split("=", 1) for line in settings.read().splitlines()
                                  if line and not line.startswith("#"))
            # More ranks than cores are bound only when told they may share one.
            return Mpi("Open MPI", mpiexec, ["--bind-to", "core:overload-allowed"],
                       lambda name, value: ["-x", f"{name}={value}"])
        return Mpi("MPICH", mpiexec, ["-bind-to", "core"], lambda name, value: ["-genv", name, value])


class Runner:
    """Starts mpiexec jobs in a scratch folder, one at a time."""

    def __init__(self, work: str, mpi: Mpi):
        self.work = work
        self.mpi = mpi
        self.started = time.monotonic()

    def progress(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:5.0f}s] {text}", file=sys.stderr, flush=True)

    def run(self, ranks: int, command: list[str], env: dict[str, str], watch: str | None = None,
            expect_success: bool = True, pinned: bool = False,
            while_running: Callable[[RunningJob], None] | None = None) -> JobResult:
        """Runs a job to its end. while_running, if given, is called once the job has started and may act on it
        (signal it, watch its files) until it ends or the job's deadline passes."""
        argv = [self.mpi.mpiexec, "-n", str(ranks)] + (self.mpi.bind_to_core if pinned else [])
        for name, value in env.items():
            argv += self.mpi.env_option(name, value)
        argv += command
        job = subprocess.Popen(argv, cwd=self.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        out: list[str] = []
        err: list[str] = []
        watched: list[float] = []
        stdout_seen: dict[str, float] = {}

        def read_stdout() -> None:
            for line in job.stdout:
                words = line.split()
                if words:
                    stdout_seen.setdefault(words[0], time.time())
                out.append(line)

        def read_stderr() -> None:
            for line in job.stderr:
                if watch and watch in line:
                    watched.append(time.time())
                err.append(line)

        readers = [threading.Thread(target=read_stdout, daemon=True),
                   threading.Thread(target=read_stderr, daemon=True)]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + JOB_TIMEOUT_S
        try:
            if while_running:
                while_running(RunningJob(job, deadline, stdout_seen, watched))
            job.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_tree(job.pid)
            job.wait()
            raise JobFailed(f"{' '.join(command)} on {ranks} ranks: no end after {JOB_TIMEOUT_S} s, killed")
        except BaseException:  # interrupted: leave no job behind
            kill_tree(job.pid)
            raise
        finally:
            for reader in readers:
                reader.join(READER_TIMEOUT_S)
        result = JobResult("".join(out), "".join(err), job.returncode, watched, stdout_seen)
        if expect_success and job.returncode != 0:
            raise JobFailed(f"{' '.join(command)} on {ranks} ranks: exit code {job.returncode}: "
                            f"{result.stderr.strip()[-300:]}")
        return result


def results_of(stdout: str) -> dict[str, float]:
    """The "RESULT <name> <value>" lines of a benchmark program."""
    values = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "RESULT":
            values[parts[1]] = float(parts[2])
    return values


def spread(values: list[float], scale: float, digits: int) -> str:
    """Median with the range of the runs, e.g. "1.02 (0.98-1.10)"."""
    if not values:
        return "failed"
    show = lambda v: f"{v * scale:.{digits}f}"
    if len(values) == 1:
        return show(values[0])
    return f"{show(statistics.median(values))} ({show(min(values))}-{show(max(values))})"


# ---------------------------------------------------------------- overhead rows

@dataclass
class Metric:
    key: str          # the program's RESULT name
    label: str
    unit: str
    scale: float      # value shown = scale * seconds, or scale / seconds when per_time
    digits: int
    target: float | None  # cost ratio (with / without) to stay under; None: a row that explains others
    per_time: bool = False  # a rate: shows scale / value


@dataclass
class Kernel:
    program: str
    ranks: int
    metrics: list[Metric]
    args: list[str] = field(default_factory=list)
    # Ranks bound to cores; threads of one rank then share its core.
    pinned: bool = True


KERNELS = [
    Kernel("pingpong", 2, [Metric("pingpong_8B", "ping-pong 8 B, 2 ranks: round trip", "us", 1e6, 3, 1.02),
                           Metric("pingpong_64KiB", "ping-pong 64 KiB, 2 ranks: round trip", "us", 1e6, 2, 1.02)]),
    Kernel("message_rate", 2, [Metric("message_window", "message rate, 8 B, windows of 64 Isend/Irecv, 2 ranks",
                                      "M msg/s", 128 / 1e6, 3, 1.01, per_time=True)]),
    Kernel("allreduce", 4, [Metric("allreduce_8B", "MPI_Allreduce 8 B, 4 ranks", "us", 1e6, 1, 1.02),
                            Metric("allreduce_1MiB", "MPI_Allreduce 1 MiB, 4 ranks", "ms", 1e3, 2, 1.02)]),
    Kernel("stencil", 4, [Metric("stencil_iteration", "2-D Jacobi halo stencil, 2x2 ranks: iteration", "ms", 1e3, 3,
                                 1.01)]),
    Kernel("rma", 2, [Metric("rma_fence_epoch", "fence epoch: MPI_Put 8 B each way, MPI_Win_fence, 2 ranks", "us",
                             1e6, 2, None),
                      Metric("rma_lock_epoch", "lock epoch: MPI_Win_lock shared, MPI_Put 8 B, MPI_Win_unlock, 2 ranks",
                             "us", 1e6, 2, None)]),
    Kernel("call_cost", 1, [Metric("call_nonblocking", "one call of Isend/Irecv/Waitall to self, 1 rank", "ns", 1e9, 1,
                                   None),
                            Metric("call_iprobe", "one MPI_Iprobe finding nothing, 1 rank", "ns", 1e9, 1, None)]),
    # Unpinned, so that the threads contend from both cores for MPICH's lock and the checker's data.
    Kernel("call_cost", 1, [Metric("call_nonblocking_threads", "one call of Isend/Irecv/Waitall to self, 1 rank, "
                                   f"{CALL_COST_THREADS} threads at once (MPI_THREAD_MULTIPLE)", "ns", 1e9, 1, None),
                            Metric("call_iprobe_threads", "one MPI_Iprobe finding nothing, 1 rank, "
                                   f"{CALL_COST_THREADS} threads at once (MPI_THREAD_MULTIPLE)", "ns", 1e9, 1, None)],
           args=[str(CALL_COST_THREADS)], pinned=False),
]


@dataclass
class Variant:
    name: str
    env: dict[str, str]
    row_suffix: str = ""
    runs: dict[str, list[float]] = field(default_factory=dict)  # metric key -> one value per round (nan: failed)
    # Another variant whose cost over this one the rows show too (what one check adds to the checker).
    under: str | None = None
    # Another variant over which the rows show this one's cost too (what checks switched on add).
    over: str | None = None


# What `mpisentry --check-all` switches on.
CHECK_ALL = "GLOBAL:COLLECTIVE:** ON; GLOBAL:MSG:** ON; GLOBAL:RMA:** ON; LOCAL:** ON; GLOBAL:MSG:RACE OFF"


def overhead_variants(library: str, baseline: str | None, defaults_only: bool) -> list[Variant]:
    """The variants of the overhead rows; with `baseline` (another build's libmpisentry.so) its defaults too,
    whose rows give what this build costs against it; `defaults_only`: no variant with a check switched."""
    checker = {"LD_PRELOAD": library, "MPISENTRY_VERBOSE": "0"}
    compared = [Variant("with the baseline library", {**checker, "LD_PRELOAD": baseline}, ", the baseline library",
                        under="with")] if baseline else []
    if defaults_only:
        return [Variant("without", {}), Variant("with", checker), *compared]
    return [Variant("without", {}),
            Variant("with", checker),
            *compared,
            # The culprit check runs only once ranks are blocked past DEADLOCK-WARNING: it should cost nothing here.
            Variant("with OUTSIDE_MPI off", {**checker, "MPISENTRY_CHECK": "GLOBAL:DEADLOCK:OUTSIDE_MPI OFF"},
                    ", checker with GLOBAL:DEADLOCK:OUTSIDE_MPI OFF", under="with"),
            Variant("with POTENTIAL", {**checker, "MPISENTRY_CHECK": "GLOBAL:DEADLOCK:POTENTIAL ON"},
                    ", POTENTIAL mode"),
            # The handle-leak checks, on by default, touch only the calls that make and free handles: their
            # cost is the defaults' over this (it must stay within 5% on the stencil and message-rate rows).
            Variant("with the leak checks off", {**checker, "MPISENTRY_CHECK": "LOCAL:*:NOT_FREED OFF"},
                    ", checker without the handle-leak checks", under="with"),
            # The consistency checks (mpisentry --check-all), over the defaults: they decide whether those
            # checks may be on by default (only if the stencil and message-rate rows stay within 5%).
            Variant("with --check-all", {**checker, "MPISENTRY_CHECK": CHECK_ALL}, ", checker with --check-all",
                    over="with"),
            Variant("with the LOCAL checks", {**checker, "MPISENTRY_CHECK": "LOCAL:** ON"},
                    ", checker with CHECK LOCAL:** ON", over="with"),
            # Each family alone: which of them may be on by default.
            Variant("with the collective checks", {**checker, "MPISENTRY_CHECK": "GLOBAL:COLLECTIVE:** ON"},
                    ", checker with CHECK GLOBAL:COLLECTIVE:** ON", over="with"),
            Variant("with the message checks",
                    {**checker, "MPISENTRY_CHECK": "GLOBAL:MSG:** ON; GLOBAL:MSG:RACE OFF"},
                    ", checker with CHECK GLOBAL:MSG:** ON", over="with"),
            # A checksum of each send buffer when its operation starts and when it completes.
            Variant("with the send-buffer check",
                    {**checker, "MPISENTRY_CHECK": "LOCAL:MEMORY:ILLEGAL_MODIFICATION ON"},
                    ", checker with CHECK LOCAL:MEMORY:ILLEGAL_MODIFICATION ON", over="with"),
            # A lookup among the pending buffers at each start, blocking send or receive and completion.
            Variant("with the buffer-overlap check",
                    {**checker, "MPISENTRY_CHECK": "LOCAL:MEMORY:OVERLAP ON"},
                    ", checker with CHECK LOCAL:MEMORY:OVERLAP ON", over="with"),
            # GLOBAL:RMA:CONFLICT: each one-sided access kept with its epoch, an exchange at each fence.
            Variant("with the RMA checks", {**checker, "MPISENTRY_CHECK": "GLOBAL:RMA:** ON"},
                    ", checker with CHECK GLOBAL:RMA:** ON", over="with"),
            # The race summary on the same channel: a clock read per message and per wildcard receive.
            Variant("with the race check", {**checker, "MPISENTRY_CHECK": "GLOBAL:MSG:RACE ON"},
                    ", checker with CHECK GLOBAL:MSG:RACE ON", over="with")]


def run_variant(runner: Runner, programs: str, kernel: Kernel, variant: Variant, failures: list[str]) -> dict[str, float]:
    """One run of the kernel as the variant: its results, also added to the variant's runs (nan: failed)."""
    try:
        # Pinned (most kernels): unpinned ranks migrate between the cores, and a run's latency then
        # lands on one of two levels 4x apart, which hides any cost of the checker.
        job = runner.run(kernel.ranks, [f"{programs}/{kernel.program}", *kernel.args], variant.env,
                         pinned=kernel.pinned)
        values = results_of(job.stdout)
    except JobFailed as failure:
        failures.append(str(failure))
        values = {}
    for metric in kernel.metrics:
        variant.runs.setdefault(metric.key, []).append(values.get(metric.key, math.nan))
    return values


def measure_overhead(runner: Runner, programs: str, variants: list[Variant], rounds: int) -> list[str]:
    failures = []
    for round_number in range(rounds):
        # The order turns every round so that a slow drift of the machine's load favours no variant.
        order = variants[round_number % len(variants):] + variants[:round_number % len(variants)]
        for kernel in KERNELS:
            for variant in order:
                runner.progress(f"round {round_number + 1}/{rounds}: {' '.join([kernel.program, *kernel.args])} "
                                f"{variant.name}")
                run_variant(runner, programs, kernel, variant, failures)
    return failures


def paired(base: Variant, other: Variant, key: str) -> list[tuple[float, float]]:
    """(base, other) of the rounds in which both ran."""
    return [(b, o) for b, o in zip(base.runs[key], other.runs[key]) if not math.isnan(b) and not math.isnan(o)]


def overhead_rows(variants: list[Variant]) -> list[list[str]]:
    without, *checked = variants
    by_name = {variant.name: variant for variant in variants}
    rows = []
    for variant in checked:
        for kernel in KERNELS:
            for metric in kernel.metrics:
                pairs = paired(without, variant, metric.key)
                # Costs are ratios of times, paired within a round (the two runs were neighbours in time).
                ratios = [c / w for w, c in pairs]
                shown = lambda values: spread([1 / v if metric.per_time else v for v in values], metric.scale,
                                              metric.digits)
                cost = statistics.median(ratios) if ratios else math.nan
                cost_cell = spread(ratios, 1, 3)
                if variant.under:
                    above = [a / b for b, a in paired(variant, by_name[variant.under], metric.key)]
                    cost_cell += f"; {variant.under} / {variant.name}: {spread(above, 1, 3)}"
                if variant.over:
                    added = [a / b for b, a in paired(by_name[variant.over], variant, metric.key)]
                    cost_cell += f"; {variant.name} / {variant.over}: {spread(added, 1, 3)}"
                rows.append([f"{metric.label}{variant.row_suffix} ({metric.unit})", shown([w for w, _ in pairs]),
                             shown([c for _, c in pairs]), cost_cell,
                             *target_cells(metric.target, cost, bool(ratios))])
    return rows


def target_cells(target: float | None, cost: float, measured: bool) -> list[str]:
    if target is None:
        return ["none: explains the rows above", "-"]
    return [f"<= {target:.2f}", verdict(cost <= target, measured)]


def verdict(met: bool, measured: bool) -> str:
    return "n/a" if not measured else "met" if met else "**missed**"


# ---------------------------------------------------------------- RECORD and REPLAY

# Each kernel's targets for RECORD over the checker without it (issue 24): race-free programs 5 %, the race-heavy
# master-worker 15 % (Meehan measured 13 % on his TSP).
RACE_KERNELS = [
    (Kernel("pingpong", 2, KERNELS[0].metrics), 1.05),
    (Kernel("stencil", 4, KERNELS[3].metrics), 1.05),
    (Kernel("master_worker", 3, [Metric("master_worker_task", "master-worker, 2 workers, every result from "
                                        "MPI_ANY_SOURCE: one task of ~20 us", "us", 1e6, 2, None)]), 1.15),
]
# What a trace of every receive would write a receive: one "R s" line of the recording's own format.
TRACE_BYTES_PER_RECEIVE = 4


def measure_races(runner: Runner, programs: str, library: str, rounds: int) -> tuple[list[list[str]], list[str]]:
    """RECORD and REPLAY over the checker without them, interleaved; each round's replay replays the recording
    its round made just before."""
    checker = {"LD_PRELOAD": library, "MPISENTRY_VERBOSE": "0"}
    recording = os.path.join(runner.work, "recording")
    failures: list[str] = []
    rows: list[list[str]] = []
    sizes: dict[int, int] = {}
    counts: dict[str, float] = {}
    for kernel, record_target in RACE_KERNELS:
        variants = [Variant("without", {}), Variant("with", checker),
                    Variant("record", {**checker, "MPISENTRY_RECORD": recording}),
                    Variant("replay", {**checker, "MPISENTRY_REPLAY": recording})]
        for round_number in range(rounds):
            # The order turns every round; a replay follows its recording.
            units = [[variants[0]], [variants[1]], variants[2:]]
            turned = units[round_number % 3:] + units[:round_number % 3]
            for variant in [v for unit in turned for v in unit]:
                runner.progress(f"races round {round_number + 1}/{rounds}: {kernel.program} {variant.name}")
                if variant.name == "record":
                    shutil.rmtree(recording, ignore_errors=True)
                values = run_variant(runner, programs, kernel, variant, failures)
                if variant.name == "record" and kernel.program == "master_worker" and values:
                    sizes = {rank: os.path.getsize(os.path.join(recording, f"rank-{rank}.record"))
                             for rank in range(kernel.ranks)}
                    counts = values
        by_name = {variant.name: variant for variant in variants}
        for metric in kernel.metrics:
            base = lambda key: [b for b, _ in paired(by_name["with"], by_name[key], metric.key)]
            for name, target in (("record", record_target), ("replay", None)):
                pairs = paired(by_name["with"], by_name[name], metric.key)
                ratios = [o / w for w, o in pairs]
                over_bare = [c / w for w, c in paired(by_name["without"], by_name["with"], metric.key)]
                shown = lambda values: spread(values, metric.scale, metric.digits)
                rows.append([f"{name.upper()}: {metric.label} ({metric.unit}); cells: the checker alone, the checker "
                             f"with {name.upper()} (the checker alone / without it: {spread(over_bare, 1, 3)})",
                             shown(base(name)), shown([o for _, o in pairs]),
                             spread(ratios, 1, 3),
                             *(target_cells(target, statistics.median(ratios) if ratios else math.nan, bool(ratios))
                               if target else ["none: the issue asks for the figure", "-"])])
    if sizes and counts:
        # The workers record no event: their files are the header and "end" that rank 0's has too.
        header = sizes[1]
        wildcard = counts.get("master_worker_wildcard_receives", math.nan)
        receives = counts.get("master_worker_receives", math.nan)
        recorded = sum(sizes.values())
        rows.append(["RECORD bytes per receive from MPI_ANY_SOURCE, master-worker (rank 0's file less its header and end)",
                     "-", f"{(sizes[0] - header) / wildcard:.2f} B", "-", "none: the issue asks for the figure", "-"])
        rows.append([f"RECORD bytes per rank, master-worker, {int(receives)} receives of which {int(wildcard)} from "
                     f"MPI_ANY_SOURCE; without: a trace of every receive ({TRACE_BYTES_PER_RECEIVE} B each)",
                     f"{int(receives) * TRACE_BYTES_PER_RECEIVE} B in all",
                     f"{recorded} B in all: " + ", ".join(f"rank {r} {s} B" for r, s in sorted(sizes.items())),
                     f"{recorded / (receives * TRACE_BYTES_PER_RECEIVE):.3f}", "none: the issue asks for the figure",
                     "-"])
    return rows, failures


# ---------------------------------------------------------------- explore

# tests/programs/matchings: mode, ranks, EXPLORE-CHANGES, what the row is, the matchings ISP would run (every
# matching of every receive from MPI_ANY_SOURCE: k senders into k receives, k! orders).
EXPLORE_CASES = [("last", ranks, 1, f"bug behind 1 of k = {ranks - 1} matchings of the first receive",
                  math.factorial(ranks - 1)) for ranks in (3, 5, 9)] + [
    ("nested", 3, 2, "two nested races: the crash needs 2 receives changed", math.comb(4, 2))]  # 2 senders' 2 messages
EXPLORE_TIMEOUT_S = 600


def explore_once(runner: Runner, launcher: str, program: str, mode: str, ranks: int, changes: int,
                 runs: int) -> tuple[dict, float]:
    """One exploration to its end: explore.json and its wall time."""
    directory = os.path.join(runner.work, "explored")
    shutil.rmtree(directory, ignore_errors=True)
    command = [launcher, "--explore", str(runs), "--explore-changes", str(changes), "--explore-dir", directory,
               "--deadlock-timeout", f"{DEADLOCK_TIMEOUT_S:g}s", "-n", str(ranks), program, mode]
    started = time.monotonic()
    job = subprocess.Popen(command, cwd=runner.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        job.wait(timeout=EXPLORE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_tree(job.pid)
        job.wait()
    seconds = time.monotonic() - started
    with open(os.path.join(directory, "explore.json")) as results:
        return json.load(results), seconds


def measure_explore(runner: Runner, launcher: str, program: str) -> tuple[list[list[str]], list[str]]:
    """Runs --explore needs to find a bug behind one matching, and to try every matching it finds."""
    rows, failures = [], []
    for mode, ranks, changes, what, exhaustive in EXPLORE_CASES:
        runner.progress(f"explore: matchings {mode} on {ranks} ranks, until the first failure")
        found, found_seconds = explore_once(runner, launcher, program, mode, ranks, changes, 1000)
        if not found["failures"]:
            failures.append(f"explore matchings {mode} -n {ranks}: no failure found")
            continue
        first = found["failures"][0]["run"] + 1
        runner.progress(f"explore: matchings sum on {ranks} ranks, every matching within {changes} changes")
        clean, clean_seconds = explore_once(runner, launcher, program, "sum", ranks, changes, 1000)
        rows.append([f"EXPLORE: {what} (matchings {mode}, {ranks} ranks, EXPLORE-CHANGES {changes}); cells: runs "
                     f"until the failing run, of all runs made; its correct twin (matchings sum): runs to try every "
                     f"matching found",
                     f"ISP, every matching: {exhaustive} runs",
                     f"found in run {first} of {found['runs']} ({found_seconds:.0f} s); twin: {clean['runs']} runs, "
                     f"{clean['infeasible']} infeasible, complete {str(clean['complete']).lower()} "
                     f"({clean_seconds:.0f} s)", "-", "none: the issue asks for the figure", "-"])
    return rows, failures


# ---------------------------------------------------------------- analyze on synthetic logs

ANALYZE_SIZES = [10, 100, 1000, 10000, 100000]
ANALYZE_TIMEOUT_S = 900


def synthetic_logs(directory: str, shape: str, ranks: int) -> int:
    """Writes the communication logs (rank-R.log) of a run of `ranks` ranks; returns the operations written.
    master-worker: 2 rounds of rank 0 sending each worker a task and taking every result from MPI_ANY_SOURCE.
    hidden: the same, but rank 0's last receive of each round is from rank 1 (a deadlock when the receives from
    MPI_ANY_SOURCE take rank 1's result first). halo: 5 iterations of a ring exchange with both neighbours
    (MPI_Irecv, MPI_Isend, MPI_Waitall) and an MPI_Allreduce."""
    os.makedirs(directory)
    operations = 0
    for rank in range(ranks):
        lines = [f"mpisentry-log 1\nrank {rank} of {ranks}\ncommand ./synthetic {shape}\nsite 1 synthetic.c:1 (main)\n"]
        if shape == "halo":
            left, right = (rank - 1) % ranks, (rank + 1) % ranks
            for iteration in range(5):
                first = 4 * iteration + 1
                lines.append(f"irecv {first} MPI_Irecv 1 {left} 0 1\nirecv {first + 1} MPI_Irecv 1 {right} 0 1\n"
                             f"isend {first + 2} MPI_Isend 1 {left} 0 1\nisend {first + 3} MPI_Isend 1 {right} 0 1\n"
                             f"wait MPI_Waitall 1 {first} {first + 1} {first + 2} {first + 3}\n"
                             "coll MPI_Allreduce 1 1\n")
                operations += 6
        elif rank == 0:
            for _ in range(2):
                lines.append("".join(f"send MPI_Send 1 {worker} 0 1\n" for worker in range(1, ranks)))
                wildcards = ranks - 2 if shape == "hidden" else ranks - 1
                lines.append("recv MPI_Recv 1 * 1 1\n" * wildcards)
                if shape == "hidden":
                    lines.append("recv MPI_Recv 1 1 1 1\n")
                operations += 2 * (ranks - 1)
        else:
            lines.append("recv MPI_Recv 1 0 0 1\nsend MPI_Send 1 0 1 1\n" * 2)
            operations += 4
        lines.append("coll MPI_Barrier 1 1\nend\n")
        operations += 1
        with open(os.path.join(directory, f"rank-{rank}.log"), "w") as log:
            log.write("".join(lines))
    return operations


def measure_analyze(runner: Runner, launcher: str) -> tuple[list[list[str]], list[str]]:
    """mpisentry analyze's time and peak memory on synthetic logs of growing size."""
    rows, failures = [], []
    for shape in ("master-worker", "hidden", "halo"):
        cells = []
        for ranks in ANALYZE_SIZES:
            directory = os.path.join(runner.work, f"logs-{shape}-{ranks}")
            runner.progress(f"analyze: writing the logs of {shape} on {ranks} ranks")
            operations = synthetic_logs(directory, shape, ranks)
            runner.progress(f"analyze: {shape} on {ranks} ranks ({operations} operations)")
            started = time.monotonic()
            err_path = os.path.join(runner.work, "analyze.err")
            with open(err_path, "w") as err:
                # The analysis alone: synthetic logs have no program to confirm a deadlock with.
                job = subprocess.Popen([launcher, "analyze", "--no-confirm", directory], stdout=subprocess.DEVNULL,
                                       stderr=err, start_new_session=True)
            timer = threading.Timer(ANALYZE_TIMEOUT_S, kill_tree, [job.pid])
            timer.start()
            _, status, usage = os.wait4(job.pid, 0)  # this process's own peak memory
            timer.cancel()
            job.returncode = os.waitstatus_to_exitcode(status)
            seconds = time.monotonic() - started
            peak = usage.ru_maxrss  # KiB
            if seconds >= ANALYZE_TIMEOUT_S:
                failures.append(f"analyze {shape} {ranks} ranks: over {ANALYZE_TIMEOUT_S} s")
            shutil.rmtree(directory, ignore_errors=True)
            expected = 3 if shape == "hidden" else 0  # 3: a deadlock found, unconfirmed
            if job.returncode != expected:
                with open(err_path) as err:
                    failures.append(f"analyze {shape} {ranks} ranks: exit status {job.returncode}, expected "
                                    f"{expected}: {err.read().strip()[:200]}")
            cells.append(f"{ranks}: {seconds:.2f} s, {seconds / operations * 1e6:.2f} µs/op, {peak / 1024:.0f} MiB")
        rows.append([f"analyze: synthetic logs, {shape} ({'deadlock expected' if shape == 'hidden' else 'clean'}); "
                     f"ranks: wall time, per operation, peak memory of the process",
                     "-", "; ".join(cells), "-", "linear: time per operation flat", "-"])
    return rows, failures


# ---------------------------------------------------------------- detection latency

def measure_detection(runner: Runner, program: str, library: str) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    for ranks, repeats in DETECTION_REPEATS.items():
        by_file, by_stderr = [], []
        for repeat in range(repeats):
            runner.progress(f"detection latency: {ranks} ranks, run {repeat + 1}/{repeats}")
            folder = tempfile.mkdtemp(dir=runner.work)
            report = os.path.join(folder, "report.txt")
            env = {"LD_PRELOAD": library, "MPISENTRY_VERBOSE": "0", "MPISENTRY_REPORT_FILE": report}  # the defaults
            try:
                job = runner.run(ranks, [program, folder], env, watch="GLOBAL:DEADLOCK:HARD", expect_success=False)
                if not os.path.exists(report):
                    raise JobFailed(f"detection on {ranks} ranks: no report file (exit code {job.returncode}): "
                                    f"{job.stderr.strip()[-300:]}")
                entries = [int(open(os.path.join(folder, f"entry.{rank}")).read()) / 1e9 for rank in range(ranks)]
            except (JobFailed, OSError, ValueError) as failure:
                failures.append(str(failure))
                continue
            due = max(entries)  # the hang: the last rank entered its receive
            by_file.append(os.stat(report).st_mtime_ns / 1e9 - due)
            if job.watched_at is not None:
                by_stderr.append(job.watched_at - due)
        measured = bool(by_file)
        lost = f", {len(by_file) - len(by_stderr)} without the report on stderr" if len(by_stderr) < len(by_file) else ""
        rows.append([f"detection latency, {ranks} ranks, the defaults (DEADLOCK-TIMEOUT auto): the report after "
                     f"the last rank entered the deadlock (s)", "-",
                     f"report file {spread(by_file, 1, 2)}; stderr {spread(by_stderr, 1, 2)} "
                     f"({len(by_file)} runs{lost})",
                     f"{statistics.median(by_file):.2f} s" if measured else "failed", "< 1 s",
                     verdict(measured and statistics.median(by_file) < 1.0, measured)])
    return rows, failures


# ---------------------------------------------------------------- monitor CPU

def thread_lines(stdout: str, tag: str) -> list[list[str]]:
    return [line.split()[1:] for line in stdout.splitlines() if line.startswith(tag + " ")]


def other_threads_cpu(stdout: str) -> tuple[float, float]:
    """Median over ranks of (CPU ms per second, most wakeups per second of one thread) of the non-main threads."""
    cpu, wakeups = {}, {}
    for rank, _tid, cpu_ns, scheduled, slept in thread_lines(stdout, "THREAD"):
        cpu[rank] = cpu.get(rank, 0.0) + int(cpu_ns) / 1e6 / float(slept)
        wakeups[rank] = max(wakeups.get(rank, 0.0), int(scheduled) / float(slept))
    if not cpu:
        raise JobFailed("idle: printed no THREAD lines")
    return statistics.median(cpu.values()), statistics.median(wakeups.values())


def measure_monitor_cpu(runner: Runner, program: str, library: str) -> tuple[list[list[str]], list[str]]:
    label = f"monitor thread CPU, 4 ranks, main threads asleep {IDLE_SECONDS} s (ms CPU per s, non-main threads)"
    variants = [("without", {}), ("with", {"LD_PRELOAD": library, "MPISENTRY_VERBOSE": "0"})]
    measured: dict[str, list[tuple[float, float]]] = {"without": [], "with": []}
    failures = []
    for pair in range(IDLE_PAIRS):
        for name, env in variants:
            runner.progress(f"monitor CPU: 4 ranks asleep for {IDLE_SECONDS} s, {name} the checker, run {pair + 1}")
            try:
                measured[name].append(other_threads_cpu(runner.run(4, [program, str(IDLE_SECONDS)], env).stdout))
            except JobFailed as failure:
                failures.append(str(failure))
    if not measured["without"] or not measured["with"]:
        return [[label, "failed", "failed", "failed", "< 0.1 % of a core", "n/a"]], failures
    without_ms = statistics.median(cpu for cpu, _ in measured["without"])
    with_ms = [cpu for cpu, _ in measured["with"]]
    wakeups = statistics.median(wakeups for _, wakeups in measured["with"])
    extra = statistics.median(with_ms) - without_ms
    return [[label, f"{without_ms:.3f}", f"{spread(with_ms, 1, 3)} (busiest thread {wakeups:.0f} wakeups/s)",
             f"{extra:.3f} ms/s = {extra / 10:.3f} % of a core",
             "< 0.1 % of a core", verdict(extra / 10 < 0.1, True)]], failures


# ---------------------------------------------------------------- per-round exchange

def tree_links(rank: int, ranks: int) -> int:
    """A rank's links in the monitors' binomial tree (tree_links in src/monitor/channel.cpp): its parent, the rank
    without its lowest set bit (none for rank 0), and its children, the rank plus each lower bit than its lowest set
    one (any bit for rank 0) while below `ranks`. A round sends one Summary frame over each."""
    lowest = rank & -rank if rank else ranks
    children = sum(1 for shift in range(ranks.bit_length()) if 1 << shift < lowest and rank + (1 << shift) < ranks)
    return (1 if rank else 0) + children


def binomial_tree_sends(ranks: int) -> tuple[float, int]:
    """Summary frames a rank sends in one round of the monitors' binomial tree, as (average over the ranks, most of
    one rank). Every rank but 0 sends one up and every parent one down to each child, 2 (P - 1) in all; rank 0, with
    a child at each power of two below P, sends the most: ceil(log2 P)."""
    return 2 * (ranks - 1) / ranks, (ranks - 1).bit_length()


def exchange_rounds(per_rank: list[dict[str, int]]) -> int:
    """The rounds of a job, from its Summary frames: 2 (P - 1) a round in all. Raises JobFailed unless each rank
    sent exactly rounds x its links in the tree."""
    ranks = len(per_rank)
    frames = sum(rank["summary_frames"] for rank in per_rank)
    rounds, left_over = divmod(frames, 2 * (ranks - 1))
    if rounds == 0 or left_over:
        raise JobFailed(f"exchange on {ranks} ranks: {frames} Summary frames in all, not a whole number (> 0) of "
                        f"rounds of {2 * (ranks - 1)}")
    astray = [f"rank {rank} sent {counts['summary_frames']}, not {rounds} x {tree_links(rank, ranks)}"
              for rank, counts in enumerate(per_rank) if counts["summary_frames"] != rounds * tree_links(rank, ranks)]
    if astray:
        raise JobFailed(f"exchange on {ranks} ranks, {rounds} rounds by the total: {'; '.join(astray)}")
    return rounds


def measure_exchange(runner: Runner, program: str, library: str, counter: str) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    env = {"LD_PRELOAD": f"{counter}:{library}", "MPISENTRY_VERBOSE": "0"}
    for ranks in EXCHANGE_RANKS:
        runner.progress(f"per-round exchange: {ranks} ranks")
        average, most = binomial_tree_sends(ranks)
        bound = most + 1
        label = f"per-round exchange, {ranks} ranks: the monitor's send() calls and bytes per rank per round"
        expected = (f"binomial tree: {average:.2f} msg (most {most}, rank 0), "
                    f"{average * SUMMARY_FRAME_BYTES:.0f} B (frames of {SUMMARY_FRAME_BYTES} B)")
        target = f"O(log P): <= ceil(log2 P) + 1 = {bound} msg"
        try:
            lines = thread_lines(runner.run(ranks, [program, str(EXCHANGE_SECONDS)], env).stdout, "SENDS")
            # "<rank> sends <n> bytes <n> summary_frames <n> socket_cpu_ns <n>"
            by_rank = {line[0]: dict(zip(line[1::2], map(int, line[2::2]))) for line in lines}
            if sorted(by_rank) != sorted(map(str, range(ranks))):
                raise JobFailed(f"exchange on {ranks} ranks: SENDS lines of ranks {', '.join(sorted(by_rank))}")
            per_rank = [by_rank[str(rank)] for rank in range(ranks)]
            rounds = exchange_rounds(per_rank)
        except (JobFailed, ValueError) as failure:
            failures.append(str(failure))
            rows.append([label, expected, "failed", "failed", target, "n/a"])
            continue
        sends = [rank["sends"] / rounds for rank in per_rank]
        sent_bytes = [rank["bytes"] / rounds for rank in per_rank]
        socket_us = [rank["socket_cpu_ns"] / 1e3 / rounds for rank in per_rank]
        busiest = max(range(ranks), key=lambda rank: sends[rank])
        other_sends = sum(rank["sends"] - rank["summary_frames"] for rank in per_rank)
        rows.append([label, expected,
                     f"{statistics.mean(sends):.2f} msg (most {sends[busiest]:.2f}, rank {busiest}), "
                     f"{statistics.mean(sent_bytes):.0f} B (most {max(sent_bytes):.0f} B); "
                     f"{statistics.median(socket_us):.1f} us CPU in send/recv per round (median over ranks); "
                     f"{rounds} rounds"
                     + (f"; {other_sends} sends not of a Summary frame" if other_sends else ""),
                     f"{statistics.mean(sends) / average:.2f} x tree", target,
                     verdict(max(sends) <= bound, True)])
    return rows, failures


# ---------------------------------------------------------------- dump on demand

@dataclass
class DumpTiming:
    """One dump of a job; wall times."""
    signalled_at: float  # just before SIGUSR1 went to mpiexec
    sizes: list[tuple[float, int]] = field(default_factory=list)  # the report file's size at each change the poll saw
    on_disk_at: float | None = None  # the poll first saw the file at the size it has once the dump is on stderr
    mtime: float | None = None  # the file's mtime then: the kernel's time of the dump's last write
    on_stderr_at: float | None = None  # the dump's first line on stderr


def report_size(report: str) -> int:
    try:
        return os.stat(report).st_size
    except FileNotFoundError:
        return -1


def signal_and_watch(job: RunningJob, report: str, dumps: list[DumpTiming]) -> None:
    """Once the program says "ready" (every rank past MPI_Init, the checker's handlers in place), asks for
    DUMPS_PER_JOB dumps, one at a time: sends SIGUSR1 to mpiexec, which hands it to every rank, and reads the report
    file's size until the dump's first line is on stderr (rank 0 writes the file and syncs it first). The next
    signal goes DUMP_GAP_S after that line."""
    while "ready" not in job.stdout_seen:
        if not job.running():
            return  # ended or overran before "ready": Runner.run reports it
        time.sleep(DUMP_POLL_S)
    for number in range(DUMPS_PER_JOB):
        if number:
            while job.running() and time.time() < job.watched[number - 1] + DUMP_GAP_S:
                time.sleep(DUMP_POLL_S)
            if not job.running():
                return  # measure_dump reports the dumps missing
        dump = DumpTiming(time.time())
        dumps.append(dump)
        os.kill(job.process.pid, signal.SIGUSR1)
        while True:
            on_stderr = len(job.watched) > number  # read first: the file is complete before the line comes
            size = report_size(report)
            if not dump.sizes or dump.sizes[-1][1] != size:
                dump.sizes.append((time.time(), size))
            if on_stderr or not job.running():
                break
            time.sleep(DUMP_POLL_S)
        if not on_stderr:
            return  # the job ended or overran first: measure_dump reports it
        dump.on_stderr_at = job.watched[number]
        dump.on_disk_at = dump.sizes[-1][0]
        dump.mtime = os.stat(report).st_mtime_ns / 1e9


def measure_dump(runner: Runner, program: str, library: str) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    for (others, others_text), (ranks, (runs, seconds)) in itertools.product(DUMP_OTHERS.items(), DUMP_RUNS.items()):
        on_disk: list[list[float]] = [[] for _ in range(DUMPS_PER_JOB)]  # per dump of a job, per run
        by_mtime: list[list[float]] = [[] for _ in range(DUMPS_PER_JOB)]
        on_stderr: list[list[float]] = [[] for _ in range(DUMPS_PER_JOB)]
        lives = []
        for run in range(runs):
            runner.progress(f"dump on demand: {ranks} ranks, the others {others}, run {run + 1}/{runs}")
            report = os.path.join(tempfile.mkdtemp(dir=runner.work), "report.txt")
            env = {"LD_PRELOAD": library, "MPISENTRY_VERBOSE": "0", "MPISENTRY_DUMP_SIGNAL": "SIGUSR1",
                   "MPISENTRY_REPORT_FILE": report}
            dumps: list[DumpTiming] = []
            try:
                # Exit code 0 is checked: the program goes on after the dumps.
                job = runner.run(ranks, [program, str(seconds), others], env, watch="DUMP: on request",
                                 while_running=lambda running: signal_and_watch(running, report, dumps))
                if not dumps:
                    raise JobFailed(f"dump on {ranks} ranks: the program never said ready")
                if not os.path.exists(report):
                    raise JobFailed(f"dump on {ranks} ranks: no report file, though the job ended with exit code 0")
                with open(report) as file:
                    first_line = file.readline()
                if "DUMP: on request" not in first_line:
                    raise JobFailed(f"dump on {ranks} ranks: the report file starts with {first_line.strip()!r}")
                if len(job.watched) != DUMPS_PER_JOB or any(dump.on_disk_at is None for dump in dumps):
                    after = lambda times: ", ".join(f"{at - dumps[0].signalled_at:.2f}" for at in times)
                    raise JobFailed(f"dump on {ranks} ranks: {len(job.watched)} dumps on stderr for {DUMPS_PER_JOB} "
                                    f"signals ({len(dumps)} sent before the job ended); signals at "
                                    f"{after(dump.signalled_at for dump in dumps)} s, dumps on stderr at "
                                    f"{after(job.watched)} s")
                if "done" not in job.stdout_seen:
                    raise JobFailed(f"dump on {ranks} ranks: rank 0 never said done after its MPI_Allreduce")
            except (JobFailed, OSError) as failure:
                failures.append(str(failure))
                continue
            for number, dump in enumerate(dumps):
                on_disk[number].append(dump.on_disk_at - dump.signalled_at)
                by_mtime[number].append(dump.mtime - dump.signalled_at)
                on_stderr[number].append(dump.on_stderr_at - dump.signalled_at)
            lives.append(job.stdout_seen["done"] - dumps[-1].on_stderr_at)
        crowded = f"; {ranks} ranks on {os.cpu_count()} cores: oversubscribed {ranks // (os.cpu_count() or 1)}x" \
            if ranks > (os.cpu_count() or 1) else ""
        label = (f"dump on demand, {ranks} ranks: SIGUSR1 to mpiexec -> report (s); rank 0 computes {seconds} s, "
                 f"{others_text}{crowded}")
        if not lives:
            rows.append([label, "-", "failed", "failed", "none set", "n/a"])
            continue
        ordinal = ["first", "second", "third"]
        dump_cells = [f"{ordinal[number]} dump: report file {spread(on_disk[number], 1, 3)} (mtime "
                      f"{spread(by_mtime[number], 1, 3)}), stderr {spread(on_stderr[number], 1, 3)}"
                      for number in range(DUMPS_PER_JOB)]
        rows.append([label, "-",
                     "; ".join(dump_cells) + f" ({len(lives)} of {runs} runs measured, each dump {DUMP_GAP_S} s "
                     f"after the previous one was on stderr; each ended with exit code 0, rank 0 computing for "
                     f"{spread(lives, 1, 1)} s more after the last dump)",
                     f"{statistics.median(on_disk[0]):.3f} s, then {statistics.median(on_disk[-1]):.3f} s",
                     "none set", "-"])
    return rows, failures


# ---------------------------------------------------------------- output

def load_average() -> str:
    with open("/proc/loadavg") as file:
        return " ".join(file.read().split()[:3])


def table(rows: list[list[str]]) -> str:
    header = ["row", "without checker / expected", "with checker", "cost / result", "target", "status"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="the CMake build folder")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each overhead variant (default 5)")
    parser.add_argument("--only", metavar="GROUP[,GROUP...]",
                        help=f"run only these groups of rows: {', '.join(GROUPS)} (default: all)")
    parser.add_argument("--overhead-only", action="store_true", help="the same as --only overhead")
    parser.add_argument("--baseline", metavar="LIBRARY",
                        help="another build's libmpisentry.so, run with its defaults beside this build's in the "
                             "overhead rows (before and after a change, interleaved)")
    parser.add_argument("--defaults-only", action="store_true",
                        help="overhead rows without the variants that switch checks on or off")
    arguments = parser.parse_args()
    if arguments.baseline and not os.path.isfile(arguments.baseline):
        parser.error(f"--baseline: {arguments.baseline} is no file")
    if arguments.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {arguments.rounds}")
    if arguments.only and arguments.overhead_only:
        parser.error("--only and --overhead-only together: give one")
    groups = ["overhead"] if arguments.overhead_only else arguments.only.split(",") if arguments.only else GROUPS
    unknown = [group for group in groups if group not in GROUPS]
    if unknown:
        parser.error(f"--only: no group {', '.join(map(repr, unknown))}; the groups are {', '.join(GROUPS)}")

    build = os.path.abspath(arguments.build)  # the jobs run in a scratch folder
    programs = os.path.join(build, "bench")
    library = os.path.join(build, "src", "runtime", "libmpisentry.so")
    counter = os.path.join(programs, "libsend_counter.so")
    launcher = os.path.join(build, "src", "launcher", "mpisentry")
    matchings = os.path.join(build, "tests", "programs", "matchings")
    needed = [kernel.program for kernel in KERNELS] + ["master_worker", "stuck_receive", "idle", "one_computes",
                                                       "libsend_counter.so"]
    for path in [library, launcher, matchings] + [os.path.join(programs, name) for name in needed]:
        if not os.path.exists(path):
            parser.error(f"{path} is missing: build the bench targets first (bench/run does)")

    work = tempfile.mkdtemp(prefix="mpisentry-bench-")
    mpi = Mpi.of_build(build)
    runner = Runner(work, mpi)
    load_before = load_average()
    rows: list[list[str]] = []
    failures: list[str] = []
    try:
        if "overhead" in groups:
            variants = overhead_variants(library, arguments.baseline and os.path.abspath(arguments.baseline),
                                         arguments.defaults_only)
            failures += measure_overhead(runner, programs, variants, arguments.rounds)
            rows += overhead_rows(variants)
        measures = {
            "races": lambda: measure_races(runner, programs, library, arguments.rounds),
            "explore": lambda: measure_explore(runner, launcher, matchings),
            "analyze": lambda: measure_analyze(runner, launcher),
            "detection": lambda: measure_detection(runner, os.path.join(programs, "stuck_receive"), library),
            "cpu": lambda: measure_monitor_cpu(runner, os.path.join(programs, "idle"), library),
            "exchange": lambda: measure_exchange(runner, os.path.join(programs, "idle"), library, counter),
            "dump": lambda: measure_dump(runner, os.path.join(programs, "one_computes"), library)}
        for group, measure in measures.items():
            if group in groups:
                more_rows, more_failures = measure()
                rows += more_rows
                failures += more_failures
    finally:
        shutil.rmtree(work, ignore_errors=True)

    elapsed = time.monotonic() - runner.started
    print(f"mpisentry benchmark, {mpi.name} ({mpi.mpiexec}), {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores; load average "
          f"(1/5/15 min) {load_before} at start, {load_average()} at end; {elapsed:.0f} s; "
          f"groups {','.join(groups)}; {arguments.rounds} interleaved runs per overhead variant. Cells: median (min-max of the runs); "
          f"cost = median of the ratios with/without of runs that were neighbours in time.\n")
    print(table(rows))
    if failures:
        print(f"\n{len(failures)} jobs failed:")
        for failure in failures:
            print(f"- {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
