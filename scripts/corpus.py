#!/usr/bin/env python3
"""Runs MPICH's own test suite (test/mpi of Debian's mpich source package), a corpus of
correct MPI programs, twice: plainly and under mpisentry. A test that passes plainly must
pass under the checker too, with no verdict; with --differential, also with the same exit
status, output lines and about the same wall time, run twice each way, interleaved
(mpisentry_testkit.differential); with --replay, also when its checked run is recorded (RECORD) and
then replayed (REPLAY), with no message of the replay. Exits 1 when one does not, 2 on a setup
error (including a test of the CI subset that did not build).

Usage: scripts/corpus [--subset ci | --all | --dirs pt2pt,coll] [--jobs N] [--differential]
                      [--replay] [--inject SEED,PERCENT,DELAY] [--deadlock-timeout T]
                      [--checker PREFIX] [--cache DIR] [--no-build] [--check-all]
                      [--mpi mpich|openmpi]
--mpi openmpi builds the same test suite with Open MPI's compiler (mpicc.openmpi, in
build/corpus-openmpi unless --cache) and runs it with Open MPI's launcher
(/usr/bin/mpiexec.openmpi) both ways, plainly and under the checker of the Open MPI build
(build-openmpi/install unless --checker; installed from build-openmpi/ first), with the
settings of scripts/openmpi.env. A test passes when it passes as it does under Open MPI
without the checker; the tests that need MPICH (OPEN_MPI_SKIPS) are listed with the reason.
See docs/corpus.md.
"""
import argparse
import dataclasses
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from mpisentry_testkit import Job, Run, differential

REPO = Path(__file__).resolve().parent.parent
CI_LIST = REPO / "scripts" / "corpus.d" / "ci-subset"
ALL_DIRS = ["pt2pt", "coll", "comm", "group", "topo", "datatype", "rma", "threads", "init", "part"]
MAX_RANKS = 8
DEFAULT_TIME_LIMIT = 180
# Only the test suite is configured, against the system's mpicc; the parts the ten
# directories do not need are left out so that configure checks less and fails less.
CONFIGURE_ARGS = ["CC=mpicc", "--enable-fortran=no", "--disable-cxx", "--disable-spawn",
                  "--disable-romio", "--disable-dtpools", "--disable-perftest",
                  "--enable-threads=multiple"]
# What --mpi changes: the compiler the test suite is configured with, the launcher of the
# runs with and without the checker, the environment of both, the default checker and
# cache. MPICH's are the script's behaviour before --mpi.
@dataclasses.dataclass
class Mpi:
    name: str                 # as in the summary
    cc: str
    configure_vars: list      # more variables for configure, which takes MPICC over CC
    mpiexec: str
    env: dict
    checker: Path             # the default --checker
    cache: Path               # the default --cache
    build_dir: Path = None    # the build that --checker's default is installed from, if any


MPIS = {
    "mpich": Mpi("MPICH", "mpicc", [], "mpiexec", {}, REPO / "build" / "install", REPO / "build" / "corpus"),
    "openmpi": Mpi("Open MPI", "mpicc.openmpi",
                   ["MPICC=mpicc.openmpi", "MPICXX=mpicxx.openmpi", "MPIFC=mpif90.openmpi",
                    "MPIF77=mpif77.openmpi", "MPIEXEC=/usr/bin/mpiexec.openmpi",
                    # The suite's datatype library (dtpools, which make builds for every
                    # directory) calls MPI_Type_hvector and MPI_Type_hindexed, removed in
                    # MPI-3.0: Open MPI 4.1's mpi.h turns them into a failing _Static_assert
                    # unless told to declare them (its library still has them).
                    "CPPFLAGS=-DOMPI_OMIT_MPI1_COMPAT_DECLS=0"],
                   "/usr/bin/mpiexec.openmpi",
                   dict(line.split("=", 1) for line in (REPO / "scripts" / "openmpi.env").read_text().splitlines()
                        if line and not line.startswith("#")),
                   REPO / "build-openmpi" / "install", REPO / "build" / "corpus-openmpi",
                   REPO / "build-openmpi"),
}
# Tests of MPICH's suite that need MPICH itself, not built or run with --mpi openmpi:
# directory/program -> why. They use MPI-4.0 functions that MPICH 4.0 has and Open MPI 4.1
# has not (its persistent collectives are MPIX_*_init of mpi-ext.h; sessions came with 5.0),
# so they do not build (the first run's build.log: the link errors and compile errors quoted).
# Everything else is built and run, and compared with its own run under Open MPI without the
# checker: a test that fails there (Open MPI behaves otherwise) is listed with its first
# lines, not blamed on the checker.
OPEN_MPI_SKIPS = {
    "coll/p_allred": "MPI_Allreduce_init (MPI-4.0 persistent collectives), which Open MPI 4.1 lacks: "
                     "undefined reference to `MPI_Allreduce_init'",
    "coll/p_scatterv": "MPI_Scatterv_init (MPI-4.0 persistent collectives), which Open MPI 4.1 lacks: "
                       "undefined reference to `MPI_Scatterv_init'",
    "init/session_mult_init": "MPI-4.0 sessions (MPI_Session_init), which Open MPI 4.1 lacks: "
                              "session.c: error: unknown type name 'MPI_Session'",
}
DEB_SRC_LIST = Path("/etc/apt/sources.list.d/mpisentry-deb-src.sources")
NO_ERRORS = re.compile(r"^\s*No [Ee]rrors\s*$", re.M)
STARTUP = "[mpisentry 0] info: checking"
NEEDS_MPICH = "needs MPICH: "
VERDICT = re.compile(r"(?:ERROR|WARNING): (GLOBAL:DEADLOCK:[A-Z_]+)")
# With --check-all: every finding of the consistency checks. The corpus's
# programs are correct, so each is blamed on the checker, except failed calls:
# MPICH's tests make erroneous calls on purpose to check the error codes, and
# an erroneous argument is then expected too, where such a call failed.
FINDING = re.compile(r"(?:ERROR|WARNING): ((?:GLOBAL:COLLECTIVE|GLOBAL:MSG|GLOBAL:RMA|LOCAL:REQUEST|LOCAL:MEMORY|"
                     r"LOCAL:MPI|LOCAL:ARGUMENT|LOCAL:THREAD|LOCAL:PARTITION):[A-Z_:]+|LOCAL:[A-Z]+:NOT_FREED): ")
EXPECTED_FINDINGS = {"LOCAL:MPI:CALL_FAILED"}
ARGUMENT_FINDING = "LOCAL:ARGUMENT:"
# With --replay: what the replay says when the run does not fit its recording.
REPLAY_PROBLEM = re.compile(r"^.*(?:replay of |cannot replay).*$", re.M)
CHECK_ALL = "GLOBAL:COLLECTIVE:** ON; GLOBAL:MSG:** ON; GLOBAL:RMA:** ON; LOCAL:** ON"


def log(message):
    print(message, flush=True)


def fail_setup(message):
    print(f"corpus: {message}", file=sys.stderr)
    sys.exit(2)


def run_logged(command, log_file, cwd=None):
    """Runs a setup command with its output in log_file; returns its exit status."""
    with open(log_file, "a") as out:
        out.write(f"$ {shlex.join(command)}\n")
        out.flush()
        return subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode


# ---------------------------------------------------------------- getting the sources

def installed(package):
    query = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                           capture_output=True, text=True)
    return "install ok installed" in query.stdout


def deb_src_stanzas():
    """The deb-src twin of every 'Types: deb' stanza of the system's deb822 sources that
    serves this release's main suite (bookworm, not bookworm-updates or -security)."""
    codename = subprocess.run(["sh", "-c", ". /etc/os-release && echo $VERSION_CODENAME"],
                              capture_output=True, text=True).stdout.strip()
    stanzas = []
    for source in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        if source == DEB_SRC_LIST:
            continue
        for stanza in source.read_text().split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if line.strip() and not line.startswith("#") and ":" in line:
                    key, value = line.split(":", 1)
                    fields[key.strip()] = value.strip()
            if "deb" in fields.get("Types", "").split() and codename in fields.get("Suites", "").split():
                fields["Types"] = "deb-src"
                fields["Suites"] = codename
                stanzas.append("".join(f"{key}: {value}\n" for key, value in fields.items()))
    classic = Path("/etc/apt/sources.list")
    if classic.exists():
        for line in classic.read_text().splitlines():
            words = line.split()
            if len(words) >= 4 and words[0] == "deb" and words[2] == codename:
                stanzas.append(f"Types: deb-src\nURIs: {words[1]}\nSuites: {codename}\n"
                               f"Components: {' '.join(words[3:])}\n")
    return "\n".join(stanzas)


def mpich_source_version():
    query = subprocess.run(["dpkg-query", "-W", "-f=${source:Version}", "libmpich-dev"],
                           capture_output=True, text=True)
    if query.returncode != 0 or not query.stdout:
        fail_setup("libmpich-dev is not installed; the corpus is built against the installed MPICH")
    return query.stdout.strip()


def unpack_fetched_sources(cache):
    """The sources that another cache fetched (the MPICH run's, build/corpus), unpacked from
    their .dsc into cache/src, when that cache has the installed version's: the same sources,
    configured apart (--mpi openmpi). False when there are none."""
    version = mpich_source_version().split(":", 1)[-1]
    for other in {MPIS["mpich"].cache} - {cache}:
        dsc = other / "src" / f"mpich_{version}.dsc"
        if not dsc.exists():
            continue
        unpacked = cache / "src" / f"mpich-{version.rsplit('-', 1)[0]}"
        (cache / "src").mkdir(parents=True, exist_ok=True)
        log(f"== unpacking {dsc} into {unpacked}")
        if run_logged(["dpkg-source", "--no-check", "-x", str(dsc), str(unpacked)], cache / "fetch.log") != 0:
            fail_setup(f"dpkg-source -x {dsc} failed; see {cache / 'fetch.log'}")
        return True
    return False


def fetch_sources(cache, mpi):
    """apt-get source mpich (the installed version) into cache/src, once; for another MPI than
    MPICH, unpacked from the MPICH run's when it has them."""
    existing = sorted((cache / "src").glob("mpich-*/test/mpi/configure"))
    if existing:
        return existing[-1].parent
    if mpi is not MPIS["mpich"] and unpack_fetched_sources(cache):
        existing = sorted((cache / "src").glob("mpich-*/test/mpi/configure"))
        if existing:
            return existing[-1].parent
    if os.geteuid() != 0:
        fail_setup("fetching the mpich sources needs root (apt-get); or pass --cache with them")
    if not installed("dpkg-dev"):
        log("== installing dpkg-dev (apt-get source needs it)")
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "dpkg-dev"],
                       check=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    has_source = subprocess.run(["apt-cache", "showsrc", "mpich"], capture_output=True, text=True)
    if not has_source.stdout.strip():
        stanzas = deb_src_stanzas()
        if not stanzas:
            fail_setup("no 'Types: deb' stanza for this release in /etc/apt/sources.list.d/*.sources "
                       "or /etc/apt/sources.list to derive a deb-src entry from")
        log(f"== adding {DEB_SRC_LIST} and running apt-get update")
        DEB_SRC_LIST.write_text(stanzas)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
    version = mpich_source_version()
    (cache / "src").mkdir(parents=True, exist_ok=True)
    log(f"== apt-get source mpich={version} into {cache / 'src'}")
    if run_logged(["apt-get", "source", "-qq", f"mpich={version}"], cache / "fetch.log",
                  cwd=cache / "src") != 0:
        fail_setup(f"apt-get source mpich={version} failed; see {cache / 'fetch.log'}")
    existing = sorted((cache / "src").glob("mpich-*/test/mpi/configure"))
    if not existing:
        fail_setup(f"no test/mpi/configure in the unpacked sources under {cache / 'src'}")
    return existing[-1].parent


# ---------------------------------------------------------------- building

def configure(suite, cache, mpi):
    """Configures the test suite alone, once, with mpi's compiler."""
    if not (suite / "Makefile").exists():
        with_cc = f" with CC={mpi.cc}" if mpi.configure_vars else ""
        log(f"== configuring {suite}{with_cc} (log: {cache / 'configure.log'})")
        arguments = [f"CC={mpi.cc}" if argument == "CC=mpicc" else argument for argument in CONFIGURE_ARGS]
        arguments[1:1] = mpi.configure_vars
        if run_logged(["./configure", *arguments], cache / "configure.log", cwd=suite) != 0:
            fail_setup(f"configure of the MPICH test suite{with_cc} failed; see {cache / 'configure.log'}")


def build(suite, tests, cache):
    """Makes the programs of `tests`, directory by directory, with -k, so that a test that
    does not build leaves its neighbours built."""
    jobs = str(os.cpu_count() or 1)
    build_log = cache / "build.log"
    programs = {}
    for test in tests:
        programs.setdefault(test.directory, set()).add(test.program)
    log(f"== building util and {sum(len(p) for p in programs.values())} programs in "
        f"{len(programs)} directories (log: {build_log})")
    if run_logged(["nice", "make", "-s", "-j", jobs, "-C", "util"], build_log, cwd=suite) != 0:
        fail_setup(f"the test suite's util library did not build; see {build_log}")
    for directory, names in programs.items():
        run_logged(["nice", "make", "-s", "-k", "-j", jobs, "-C", directory, *sorted(names)], build_log, cwd=suite)


# ---------------------------------------------------------------- the test lists

@dataclasses.dataclass
class Test:
    directory: str            # relative to test/mpi, e.g. threads/pt2pt
    program: str
    ranks: int
    line: str                 # the testlist line, whitespace normalized
    args: list
    env: dict
    mpiexec_args: list
    time_limit: int
    skip: str = ""            # why the test is not run, empty when it is

    @property
    def name(self):
        return f"{self.directory}: {self.line}"


def parse_testlist(suite, directory):
    """The tests of directory's testlist, following sub-directory entries, as runtests does."""
    listfile = suite / directory / "testlist"
    if not listfile.exists():
        return []
    tests = []
    for raw in listfile.read_text().splitlines():
        words = raw.split("#", 1)[0].split()
        if not words or words[0].startswith("!"):
            continue
        program = words[0]
        if (suite / directory / program).is_dir():
            tests += parse_testlist(suite, f"{directory}/{program}")
            continue
        options = {}
        args, env, mpiexec_args = [], {}, []
        for word in words[2:]:
            key, _, value = word.partition("=")
            if key == "arg":
                args.append(value)
            elif key == "env":
                name, _, setting = value.partition("=")
                env[name] = setting
            elif key == "mpiexecarg":
                mpiexec_args.append(value)
            elif value:
                options[key] = value
        ranks = int(words[1]) if len(words) > 1 and words[1].isdigit() else 1
        limit = options.get("timeLimit", "")
        test = Test(directory, program, ranks, " ".join(words), args, env, mpiexec_args,
                    int(limit) if limit.isdigit() else DEFAULT_TIME_LIMIT)
        if "xfail" in options:
            test.skip = f"xfail={options['xfail']}"
        elif ranks > MAX_RANKS:
            test.skip = f"needs {ranks} ranks (> {MAX_RANKS})"
        elif "resultTest" in options:
            test.skip = f"expects a failing exit ({options['resultTest']})"
        tests.append(test)
    return tests


def read_ci_subset():
    names = []
    for line in CI_LIST.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.append(" ".join(line.split()))
    return names


def select_ci_subset(all_tests):
    """The CI subset in the order of its list, checking that every listed test exists."""
    by_name = {test.name: test for test in all_tests}
    chosen = []
    for number, name in enumerate(read_ci_subset(), 1):
        if name not in by_name:
            fail_setup(f"{CI_LIST}: entry {number} '{name}' is not a test of the testlists")
        chosen.append(by_name[name])
    return chosen


# ---------------------------------------------------------------- running

@dataclasses.dataclass
class Run(Run):
    report_written: bool = False

    @property
    def passed(self):
        return self.status == 0 and NO_ERRORS.search(self.stdout) is not None

    @property
    def verdicts(self):
        findings = set(self.findings)
        expected = set(EXPECTED_FINDINGS)
        if "LOCAL:MPI:CALL_FAILED" in findings:
            expected |= {f for f in findings if f.startswith(ARGUMENT_FINDING)}
        return sorted(set(VERDICT.findall(self.stderr)) | findings - expected)

    @property
    def findings(self):
        return sorted(set(FINDING.findall(self.stderr)))

    def outcome(self):
        if self.status is None:
            return f"timed out after {self.seconds:.0f} s"
        if self.status != 0:
            return f"exit status {self.status}"
        if not NO_ERRORS.search(self.stdout):
            return "no ' No Errors' line"
        return "passed"


@dataclasses.dataclass
class Result:
    number: int               # position in the run order
    test: Test
    plain_runs: list = dataclasses.field(default_factory=list)
    checked_runs: list = dataclasses.field(default_factory=list)
    comparison: differential.Comparison = None   # with --differential, once every run is done

    @property
    def plain(self):
        return self.plain_runs[0] if self.plain_runs else None

    @property
    def checked(self):
        return self.checked_runs[0] if self.checked_runs else None

    def next_run(self, differential_runs, replay=False):
        """'plain', 'checked' or None when done: plain first; checked runs only after a
        plain pass; with --differential, plain and checked alternate up to
        differential_runs(plain runs, checked runs) each; with replay, a second checked run
        replays the first's recording."""
        if not self.plain_runs:
            return "plain"
        if not self.plain.passed:
            return None
        if len(self.checked_runs) < len(self.plain_runs) or (replay and len(self.checked_runs) == 1):
            return "checked"
        if differential_runs and len(self.plain_runs) < differential_runs(self.plain_runs, self.checked_runs):
            return "plain"
        return None

    def checker_problem(self):
        """Why the checker is to blame, or empty: only for tests that passed plainly."""
        if not self.plain.passed or self.checked is None:
            return ""
        problems = []
        for checked in self.checked_runs:
            if said := REPLAY_PROBLEM.search(checked.stderr):
                problems.append(f"replay: {said.group(0).strip()[:200]}")
            if checked.verdicts:
                problems.append("verdict " + ",".join(checked.verdicts))
            if not checked.passed:
                problems.append(checked.outcome())
            if checked.report_written and not checked.verdicts and not checked.findings:
                problems.append("report file written")
        return "; ".join(dict.fromkeys(problems))

    def differences(self):
        return self.comparison.differences if self.comparison else []

    def unchecked(self):
        """Passed both ways, but the checker never started: no MPI_Init or MPI_Init_thread
        (an MPI-4 sessions program), so nothing was checked. Listed, not blamed."""
        return (self.checked is not None and self.checked.passed and not self.checker_problem()
                and STARTUP not in self.checked.stderr)


class Runner:
    def __init__(self, options, suite, results_dir):
        self.options, self.suite, self.results_dir = options, suite, results_dir
        self.launcher = options.checker / "bin" / "mpisentry"
        self.cores = os.cpu_count() or 1
        self.interrupted = False

    def check_settings(self):
        """The launcher checks the settings before it starts anything: bad ones stop the
        script here rather than fail every checked run."""
        probe = subprocess.run([str(self.launcher), "--", "true"], capture_output=True, text=True,
                               env=self.environment(None, True, os.devnull))
        if probe.returncode != 0:
            fail_setup(f"{self.launcher} rejects the settings:\n{probe.stderr.strip()}")

    def command(self, test, checked):
        line = [self.options.mpi.mpiexec, "-n", str(test.ranks), *test.mpiexec_args, f"./{test.program}", *test.args]
        return [str(self.launcher), "--", *line] if checked else line

    def environment(self, test, checked, report_file, recording=None, replaying=False):
        """recording: with --replay, the directory the checked run records in, or replays."""
        env = dict(os.environ)
        env.update(self.options.mpi.env)
        env.update(test.env if test else {})
        if recording:
            env["MPISENTRY_REPLAY" if replaying else "MPISENTRY_RECORD"] = str(recording)
        if checked:
            env["MPISENTRY_DEADLOCK_TIMEOUT"] = self.options.deadlock_timeout
            env["MPISENTRY_DEADLOCK_WARNING"] = self.options.deadlock_warning
            env["MPISENTRY_REPORT_FILE"] = str(report_file)
            env["MPISENTRY_VERBOSE"] = "1"    # its start-up line proves the checker was loaded
            if self.options.inject:
                env["MPISENTRY_INJECT_DELAYS"] = self.options.inject
            if self.options.check_all:
                env["MPISENTRY_CHECK"] = CHECK_ALL
                env["MPISENTRY_CHECK_MAX_ERRORS"] = "0"  # every finding of a test, not only its first
        return env

    def start(self, result, number, kind):
        """The job of the next `kind` run of a test, and its report file (checked runs)."""
        checked = kind == "checked"
        runs = result.checked_runs if checked else result.plain_runs
        suffix = f"-{len(runs) + 1}" if runs else ""   # the first run's names as without --differential
        logs = self.results_dir / "logs"
        report_file = logs / f"{number:04d}{suffix}.report" if checked else None
        recording = logs / f"{number:04d}.recording" if checked and self.options.replay else None
        job = Job(self.command(result.test, checked),
                               self.environment(result.test, checked, report_file, recording, replaying=bool(runs)),
                               self.suite / result.test.directory, result.test.time_limit,
                               logs / f"{number:04d}.{kind}{suffix}")
        return job, report_file

    def run(self, tests):
        """Runs each test plainly, then (if it passed) under the checker; with --differential,
        plain and checked again (differential.runs_wanted). Up to --jobs jobs at once, never
        more ranks than cores unless a single job needs more by itself."""
        (self.results_dir / "logs").mkdir(parents=True, exist_ok=True)
        differential_runs = differential.runs_wanted if self.options.differential else None
        pending = [(number, Result(number, test)) for number, test in enumerate(tests, 1)]
        running = []          # (job, report file, number, result)
        done = []
        try:
            while pending or running:
                busy = sum(min(result.test.ranks, self.cores) for *_, result in running)
                while pending and len(running) < self.options.jobs:
                    number, result = pending[0]
                    if running and busy + min(result.test.ranks, self.cores) > self.cores:
                        break
                    pending.pop(0)
                    running.append((*self.start(result, number, result.next_run(differential_runs, self.options.replay)),
                                    number, result))
                    busy += min(result.test.ranks, self.cores)
                time.sleep(0.02)
                for entry in list(running):
                    job, report_file, number, result = entry
                    run = job.poll()
                    if run is None:
                        continue
                    running.remove(entry)
                    run = Run(**dataclasses.asdict(run),
                              report_written=report_file is not None and report_file.exists())
                    (result.checked_runs if report_file else result.plain_runs).append(run)
                    if result.next_run(differential_runs, self.options.replay):
                        pending.insert(0, (number, result))   # its next run comes next
                        continue
                    if self.options.differential and result.checked_runs:
                        result.comparison = differential.compare(result.plain_runs, result.checked_runs,
                                                                 result.test.ranks)
                    done.append(result)
                    self.progress(number, len(tests), result)
        except KeyboardInterrupt:
            log("== interrupted: ending the running jobs; the summary covers the finished tests")
            self.interrupted = True
            for job, *_ in running:
                job.kill_group()
        return done

    def progress(self, number, total, result):
        plain = result.plain
        line = f"[{number}/{total}] {result.test.name}: plain {plain.outcome()} ({plain.seconds:.1f} s)"
        if result.checked:
            problem = result.checker_problem()
            outcome = f"FAILED: {problem}" if problem else "passed"
            if result.unchecked():
                outcome += " but the checker never started"
            line += f", checked {outcome} ({result.checked.seconds:.1f} s)"
        if result.comparison:
            comparison = result.comparison
            line += (f"; {'DIFFERS' if comparison.differences else 'same'} "
                     f"({differential.times_text(result.plain_runs, result.checked_runs)}, x{comparison.ratio:.2f})")
            if comparison.unstable:
                line += f"; varies without the checker: {', '.join(comparison.unstable)}"
            line += "".join(f"\n    {difference}" for difference in comparison.differences)
        log(line)


# ---------------------------------------------------------------- the summary

def verdict_lines(stderr):
    """The report's first lines: the verdict, the wait-for core and the blocked calls."""
    return [line for line in stderr.splitlines() if re.match(r"\[\d+\] (ERROR|WARNING):", line)][:10]


def first_lines(run, count=4):
    """A failed run's first lines that say something, stdout's first, cut short: not blank,
    not the rules of Open MPI's boxed messages."""
    lines = (run.stdout + "\n" + run.stderr).splitlines()
    return [line[:200] for line in lines if line.strip() and line.strip("- ")][:count]


def build_error(cache, test):
    """The first compiler or linker error of test's program in the last make of its directory
    in the build log, or a pointer to the log."""
    lines = (cache / "build.log").read_text(errors="replace").splitlines()
    made = [number for number, line in enumerate(lines)
            if line.startswith("$ nice make") and f" -C {test.directory} " in line + " "]
    sources = (f"{test.program}.c", f"{test.program}.o")
    for line in lines[made[-1] if made else 0:]:
        if line.startswith("$ ") and made:
            if line != lines[made[-1]]:
                break
        elif any(source in line for source in sources) and ("error:" in line or "undefined reference" in line):
            return line.strip()[:240]
    return f"see {cache / 'build.log'}"


def summarize(options, selected, to_run, results, interrupted, wall, results_dir):
    skipped = [test for test in selected if test.skip]
    not_built = [test for test in skipped if test.skip == "did not build"]
    need_mpich = [test for test in skipped if test.skip.startswith(NEEDS_MPICH)]
    plain_passed = [r for r in results if r.plain.passed]
    checked_passed = [r for r in plain_passed if r.checked.passed]
    blamed = [r for r in results if r.checker_problem()]
    differing = [r for r in results if r.differences()]
    unchecked = [r for r in results if r.unchecked()]
    verdicts = {}
    for r in results:
        for name in (r.checked.verdicts if r.checked else []):
            verdicts[name] = verdicts.get(name, 0) + 1
    plain_time = sum(r.plain.seconds for r in results)
    checked_time = sum(r.checked.seconds for r in results if r.checked)
    plain_time_of_checked = sum(r.plain.seconds for r in plain_passed)
    rows = [
        ("tests selected", len(selected)),
        ("skipped (xfail, > 8 ranks, expects a failing exit)", len(skipped) - len(not_built) - len(need_mpich)),
        *([("skipped: needs MPICH (listed below)", len(need_mpich))] if options.mpi.name != "MPICH" else []),
        ("did not build", len(not_built)),
        ("run", f"{len(results)}" + (f" (INTERRUPTED: {len(to_run)} to run)" if interrupted else "")),
        ("passed without the checker", len(plain_passed)),
        ("failed without the checker (not blamed on it)", len(results) - len(plain_passed)),
        ("passed with the checker, no verdict", len(plain_passed) - len(blamed)),
        ("... of which the checker never started (no MPI_Init: sessions)", len(unchecked)),
        ("failed or got a verdict with the checker", len(blamed)),
        ("verdicts", ", ".join(f"{n} x{c}" for n, c in sorted(verdicts.items())) or "none"),
        *([("tests with LOCAL:MPI:CALL_FAILED (erroneous calls made on purpose)",
            sum(1 for r in results if r.checked and "LOCAL:MPI:CALL_FAILED" in r.checked.findings))]
          if options.check_all else []),
        ("wall time of the runs without / with the checker",
         f"{plain_time:.0f} s / {checked_time:.0f} s "
         f"(tests run both ways: {plain_time_of_checked:.0f} s / {checked_time:.0f} s)"),
        *([(f"differential: {label}", value)
           for label, value in differential.summary_rows([r.comparison for r in results if r.comparison])]
          if options.differential else []),
        ("wall time of the whole script", f"{wall:.0f} s"),
    ]
    settings = (f"--jobs {options.jobs}, DEADLOCK-TIMEOUT {options.deadlock_timeout}, "
                f"DEADLOCK-WARNING {options.deadlock_warning}"
                + (f", MPISENTRY_INJECT_DELAYS={options.inject}" if options.inject else "")
                + (", --check-all" if options.check_all else "")
                + (", --differential" if options.differential else ""))
    built_with = "" if options.mpi.name == "MPICH" else f", built and run with {options.mpi.name}"
    lines = ["", f"## MPICH test suite under mpisentry{built_with} ({settings})", "",
             "| | |", "|---|---|"] + [f"| {label} | {value} |" for label, value in rows]
    if need_mpich:
        lines += ["", f"Not run with {options.mpi.name}, they need MPICH:"]
        lines += [f"- {t.name}: {t.skip[len(NEEDS_MPICH):]}" for t in need_mpich]
    if not_built:
        lines += ["", "Did not build: " + ", ".join(sorted({f"{t.directory}/{t.program}" for t in not_built}))]
        if options.mpi.name != "MPICH":
            lines += [f"- {t.directory}/{t.program}: {build_error(options.cache, t)}" for t in not_built]
    failed_plain = [r for r in results if not r.plain.passed]
    if failed_plain:
        lines += ["", "Failed without the checker:"]
        for r in failed_plain:
            lines.append(f"- {r.test.name}: {r.plain.outcome()}")
            if options.mpi.name != "MPICH":
                lines += [f"      {line}" for line in first_lines(r.plain)]
    if unchecked:
        lines += ["", "The checker never started: " + ", ".join(r.test.name for r in unchecked)]
    if blamed:
        lines += ["", "Failed or got a verdict with the checker:"]
        for r in blamed:
            lines.append(f"- {r.test.name}: {r.checker_problem()} "
                         f"(plain {r.plain.seconds:.1f} s, checked {r.checked.seconds:.1f} s)")
            lines += [f"      {line}" for line in verdict_lines(r.checked.stderr)]
    if differing:
        lines += ["", "Ended differently with the checker (--differential):"]
        for r in differing:
            lines.append(f"- {r.test.name} ({differential.times_text(r.plain_runs, r.checked_runs)}):")
            lines += [f"      {difference}" for difference in r.differences()]
    lines += ["", f"Logs: {results_dir}"]
    text = "\n".join(lines) + "\n"
    (results_dir / "summary.md").write_text(text)
    with open(results_dir / "results.tsv", "w") as tsv:
        tsv.write("test\tranks\tplain\tplain_s\tchecked\tchecked_s\tchecker_problem\tdifferences\n")
        for r in results:
            checked = r.checked.outcome() if r.checked else "not run"
            checked_s = f"{r.checked.seconds:.2f}" if r.checked else ""
            tsv.write(f"{r.test.name}\t{r.test.ranks}\t{r.plain.outcome()}\t{r.plain.seconds:.2f}"
                      f"\t{checked}\t{checked_s}\t{r.checker_problem()}\t{' | '.join(r.differences())}\n")
    print(text, end="")
    if options.subset and not_built:
        # The fixed subset is chosen to build here: a test that did not is a
        # broken setup, and a CI that ran less would pass while checking less.
        print(f"corpus: {len(not_built)} tests of the CI subset did not build; see {options.cache / 'build.log'}",
              file=sys.stderr)
        return 2
    return 1 if blamed or differing else 130 if interrupted else 0


def interrupt(signum, frame):
    raise KeyboardInterrupt


# ---------------------------------------------------------------- main

def mpi_choice(value):
    if value not in MPIS:
        raise argparse.ArgumentTypeError(f"'{value}' is not an MPI of this script: give {' or '.join(MPIS)}")
    return MPIS[value]


def install_checker(parser, mpi):
    """Installs mpi's build into the default checker prefix (cmake --install leaves files that
    are up to date alone)."""
    build = mpi.build_dir
    for source in (build / "src" / "runtime" / "libmpisentry.so", build / "src" / "launcher" / "mpisentry"):
        if not source.exists():
            parser.error(f"--mpi: {mpi.name}'s build has no {source.relative_to(REPO)}; build it first "
                         "(scripts/openmpi)")
    command = ["cmake", "--install", str(build), "--prefix", str(mpi.checker)]
    if subprocess.run(command, stdout=subprocess.DEVNULL).returncode != 0:
        fail_setup(f"{shlex.join(command)} failed")


def parse_options():
    parser = argparse.ArgumentParser(prog="scripts/corpus", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--subset", choices=["ci"], help="the fixed CI subset (scripts/corpus.d/ci-subset)")
    which.add_argument("--all", action="store_true", help=f"every test of {','.join(ALL_DIRS)} (default)")
    which.add_argument("--dirs", help="comma-separated test/mpi directories, e.g. pt2pt,coll")
    parser.add_argument("--jobs", type=int, default=1, help="jobs at once, never more ranks than cores (1)")
    parser.add_argument("--inject", metavar="SEED,PERCENT,DELAY",
                        help="MPISENTRY_INJECT_DELAYS for checked runs; DEADLOCK-TIMEOUT defaults to 200l")
    parser.add_argument("--deadlock-timeout", help="DEADLOCK-TIMEOUT of checked runs (auto, the default; 200l with --inject)")
    parser.add_argument("--check-all", action="store_true",
                        help="checked runs also with every consistency check (mpisentry --check-all) and "
                             "CHECK-MAX-ERRORS 0; a finding other than LOCAL:MPI:CALL_FAILED is blamed")
    parser.add_argument("--replay", action="store_true",
                        help="record each checked run (RECORD), then run it again replaying the recording "
                             "(REPLAY): the replay must pass too, with no message of the replay")
    parser.add_argument("--differential", action="store_true",
                        help="also compare exit status, output lines and wall time with and without the "
                             "checker, interleaved, twice each way (scripts/differential); a "
                             "difference fails the run")
    parser.add_argument("--deadlock-warning", default="10s", help="DEADLOCK-WARNING of checked runs (10s)")
    parser.add_argument("--mpi", default="mpich", type=mpi_choice, metavar="mpich|openmpi",
                        help="the MPI that builds and runs the tests, with and without the checker: "
                             "mpich (default) or openmpi (mpicc.openmpi, /usr/bin/mpiexec.openmpi, the "
                             "checker of build-openmpi/install, the cache build/corpus-openmpi)")
    parser.add_argument("--checker", type=Path,
                        help="mpisentry install prefix (build/install; build-openmpi/install with --mpi openmpi)")
    parser.add_argument("--cache", type=Path,
                        help="sources, build and results (build/corpus; build/corpus-openmpi with --mpi openmpi)")
    parser.add_argument("--no-build", action="store_true", help="use the built tests as they are")
    options = parser.parse_args()
    default_checker = options.checker is None
    if default_checker:
        options.checker = options.mpi.checker
    if options.cache is None:
        options.cache = options.mpi.cache
    if options.jobs < 1:
        parser.error(f"--jobs {options.jobs}: must be at least 1")
    if options.replay and options.differential:
        parser.error("--replay and --differential: give one")
    if options.inject and not re.fullmatch(r"\d+,\d+(\.\d+)?,\d+(\.\d+)?[clsmhdw]?", options.inject):
        parser.error(f"--inject {options.inject}: expected SEED,PERCENT,DELAY such as 1,5,300l")
    if options.deadlock_timeout is None:
        options.deadlock_timeout = "200l" if options.inject else "auto"
    options.dirs = options.dirs.split(",") if options.dirs else ALL_DIRS
    unknown = [d for d in options.dirs if d not in ALL_DIRS]
    if unknown:
        parser.error(f"--dirs: {','.join(unknown)} not among {','.join(ALL_DIRS)}")
    if default_checker and options.mpi.build_dir:
        install_checker(parser, options.mpi)
    launcher = options.checker / "bin" / "mpisentry"
    if not os.access(launcher, os.X_OK):
        build_dir = os.path.relpath(options.mpi.build_dir or REPO / "build", REPO)
        parser.error(f"--checker {options.checker}: no executable {launcher} (cmake --install {build_dir} --prefix ...)")
    options.checker = options.checker.resolve()
    options.cache = options.cache.resolve()
    return options


def main():
    options = parse_options()
    started = time.monotonic()
    options.cache.mkdir(parents=True, exist_ok=True)
    suite = fetch_sources(options.cache, options.mpi)
    dirs = ALL_DIRS if options.subset else options.dirs
    if not options.no_build:
        configure(suite, options.cache, options.mpi)
    elif not (suite / "testlist").exists():
        fail_setup(f"--no-build: the test suite in {suite} is not configured (it has no testlist); "
                   "run once without --no-build")
    all_tests = [test for directory in dirs for test in parse_testlist(suite, directory)]
    selected = select_ci_subset(all_tests) if options.subset else all_tests
    if options.mpi.name != "MPICH":
        for test in selected:
            reason = OPEN_MPI_SKIPS.get(f"{test.directory}/{test.program}")
            if reason and not test.skip:
                test.skip = NEEDS_MPICH + reason
    to_run = [test for test in selected if not test.skip]
    if not options.no_build:
        build(suite, to_run, options.cache)
    for test in to_run:
        if not (suite / test.directory / test.program).exists():
            test.skip = "did not build"
    to_run = [test for test in to_run if not test.skip]
    # Fewer ranks first: quick feedback, and the small jobs pack well with --jobs.
    to_run.sort(key=lambda test: test.ranks)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    results_dir = options.cache / "results" / stamp
    log(f"== {len(to_run)} tests to run ({len(selected) - len(to_run)} skipped) "
        f"with checker {options.checker}" + (f", under {options.mpi.name} ({options.mpi.mpiexec})"
                                             if options.mpi.name != "MPICH" else "")
        + f"; logs in {results_dir}")
    for test in selected:
        if test.skip:
            log(f"skip {test.name}: {test.skip}")
    runner = Runner(options, suite, results_dir)
    runner.check_settings()
    signal.signal(signal.SIGTERM, interrupt)
    results = runner.run(to_run)
    results.sort(key=lambda result: result.number)
    return summarize(options, selected, to_run, results, runner.interrupted,
                     time.monotonic() - started, results_dir)


if __name__ == "__main__":
    sys.exit(main())
