"""Differential check: a correct program must end the same with and without mpisentry:
the same exit status, the same output lines (the checker's own stderr lines aside) and
about the same wall time. Runs the program plainly and checked, interleaved (plain,
checked, plain, checked) so that both see the same load, and prints what differed.
scripts/corpus imports this module; scripts/generated runs it once per program
(python3 -m mpisentry_testkit.differential). Exits 1 when something differed, 2 when the
first plain run failed (nothing compared).

Usage: scripts/differential --checker 'PREFIX' [--name NAME] [--runs N]
                            [--time-limit S] [--logs DIR] [--record FILE] -- COMMAND...
       scripts/differential --summarize FILE
The checked command is PREFIX followed by COMMAND. --record appends the program's
figures to FILE (TSV); --summarize prints the totals of such a file.
See docs/corpus.md.
"""
import argparse
import collections
import dataclasses
import re
import shlex
import statistics
import sys
from pathlib import Path

from .jobs import Job

# The checker's own stderr lines: its log (src/log: "[mpisentry] info: ...",
# "[mpisentry 3] error: ..."), its reports (src/report, src/signals: "[0] ERROR: ",
# "[1] WARNING: ", "[0] INFO: ") and the launcher's messages ("mpisentry: ...").
CHECKER_LINE = re.compile(r"^(?:\[mpisentry(?: \d+)?\] |\[\d+\] (?:ERROR|WARNING|INFO): |mpisentry: )")
# A finding when the checked median wall time is more than MAX_RATIO times the
# plain median, or more than MAX_EXTRA_SECONDS longer (docs/corpus.md has the
# noise these were chosen against).
MAX_RATIO = 2.0
MAX_EXTRA_SECONDS = 2.0
# The ratio alone is no finding below this difference: starting the checker
# costs a fixed fraction of a second, which doubles a program of 0.3 s.
MIN_EXTRA_SECONDS = 1.0
# A program whose first plain run takes this long runs once each way, not twice.
LONG_RUN_SECONDS = 30.0
DEFAULT_RUNS = 2
# Runs added each way when the first ones are too slow with the checker: under
# load one run of a polling program can take ten times another (rma/at_complete
# 2 took 0.9 to 8.4 s plainly in five runs), so one such run is no finding.
CONFIRMING_RUNS = 3


def runs_wanted(plain, checked):
    """Runs each way: two, so that the timing has a spread, but one for a long program;
    CONFIRMING_RUNS more when those say the checked runs are too slow."""
    first = 1 if plain[0].seconds >= LONG_RUN_SECONDS else DEFAULT_RUNS
    if len(checked) >= first and too_slow(plain[:first], checked[:first]):
        return first + CONFIRMING_RUNS
    return first


def too_slow(plain, checked):
    """The wall-time difference, or empty: a finding when the checked median is more than
    MAX_RATIO times the plain median (and MIN_EXTRA_SECONDS longer) or more than
    MAX_EXTRA_SECONDS longer. Runs that timed out are not timed."""
    if any(run.status is None for run in plain + checked):
        return ""
    plain_seconds = statistics.median(run.seconds for run in plain)
    checked_seconds = statistics.median(run.seconds for run in checked)
    extra = checked_seconds - plain_seconds
    ratio = checked_seconds / max(plain_seconds, 1e-3)
    if extra > MAX_EXTRA_SECONDS or (ratio > MAX_RATIO and extra > MIN_EXTRA_SECONDS):
        return (f"wall time: without the checker {plain_seconds:.2f} s, with it {checked_seconds:.2f} s "
                f"(x{ratio:.2f}, +{extra:.2f} s; medians of {len(plain)} and {len(checked)} runs)")
    return ""


def program_lines(text, ranks):
    """The program's own lines of a stream, the checker's left out. Sorted when several
    ranks write: mpiexec forwards each rank's lines as they come, so the order between
    ranks differs from run to run (and the checker changes the timing)."""
    lines = [line for line in text.splitlines() if not CHECKER_LINE.match(line)]
    return sorted(lines) if ranks > 1 else lines


def line_difference(plain, checked):
    """'lines a, b only without the checker; c only with it', or the first line out of order."""
    only_plain = list((collections.Counter(plain) - collections.Counter(checked)).elements())
    only_checked = list((collections.Counter(checked) - collections.Counter(plain)).elements())
    parts = []
    for label, lines in (("only without the checker", only_plain), ("only with it", only_checked)):
        if lines:
            shown = ", ".join(repr(line[:100]) for line in lines[:3])
            parts.append(f"{len(lines)} line{'s' if len(lines) > 1 else ''} {label}: {shown}"
                         + (", ..." if len(lines) > 3 else ""))
    if not parts:
        first = next(i for i, (a, b) in enumerate(zip(plain, checked)) if a != b)
        parts.append(f"the same lines in another order, first at line {first + 1}: "
                     f"{plain[first][:100]!r} / {checked[first][:100]!r}")
    return "; ".join(parts)


@dataclasses.dataclass
class Comparison:
    differences: list         # what differed: each a line with both values
    unstable: list            # what differed between the plain runs themselves: not compared
    plain_seconds: float      # medians
    checked_seconds: float
    plain_spread: float       # slowest / fastest plain run: the noise of this program

    @property
    def ratio(self):
        return self.checked_seconds / self.plain_seconds if self.plain_seconds > 0 else float("inf")


def status_text(status):
    return "timeout" if status is None else str(status)


def compare(plain, checked, ranks):
    """Compares the runs of one correct program without (plain) and with (checked) the
    checker. What differs between the plain runs themselves is not compared."""
    runs_differing = {}       # what differed: the checked runs in which it did
    unstable = []
    plain_statuses = {run.status for run in plain}
    if len(plain_statuses) > 1:
        unstable.append("exit status " + "/".join(status_text(run.status) for run in plain))
    else:
        expected = plain[0].status
        for number, run in enumerate(checked, 1):
            if run.status != expected:
                runs_differing.setdefault(f"exit status: without the checker {status_text(expected)}, "
                                          f"with it {status_text(run.status)}", []).append(number)
    for stream in ("stdout", "stderr"):
        plain_lines = [program_lines(getattr(run, stream), ranks) for run in plain]
        if any(lines != plain_lines[0] for lines in plain_lines):
            unstable.append(stream)
            continue
        for number, run in enumerate(checked, 1):
            lines = program_lines(getattr(run, stream), ranks)
            if lines != plain_lines[0]:
                runs_differing.setdefault(f"{stream}: {line_difference(plain_lines[0], lines)}", []).append(number)
    differences = [f"{what} (checked run{'s' if len(numbers) > 1 else ''} {', '.join(map(str, numbers))})"
                   for what, numbers in runs_differing.items()]
    plain_seconds = statistics.median(run.seconds for run in plain)
    checked_seconds = statistics.median(run.seconds for run in checked)
    comparison = Comparison(differences, unstable, plain_seconds, checked_seconds,
                            max(r.seconds for r in plain) / max(min(r.seconds for r in plain), 1e-3))
    slow = too_slow(plain, checked)
    if slow:
        differences.append(slow)
    return comparison


def times_text(plain, checked):
    return (f"plain {'/'.join(f'{r.seconds:.2f}' for r in plain)} s, "
            f"checked {'/'.join(f'{r.seconds:.2f}' for r in checked)} s")


def spread_text(values):
    """Median, quartiles and range of a list of ratios."""
    if not values:
        return "none"
    values = sorted(values)
    if len(values) < 4:
        return f"median {statistics.median(values):.2f}, range {values[0]:.2f}-{values[-1]:.2f}"
    q1, median, q3 = statistics.quantiles(values, n=4)
    return (f"median {median:.2f}, quartiles {q1:.2f}-{q3:.2f}, range {values[0]:.2f}-{values[-1]:.2f} "
            f"({len(values)} programs)")


def summary_rows(comparisons):
    """The figures of many programs: counts, the ratio checked/plain and, as the noise to
    judge it by, the slowest/fastest ratio of each program's plain runs."""
    return [
        ("programs compared", len(comparisons)),
        ("... with a difference", sum(1 for c in comparisons if c.differences)),
        ("... with output or status varying without the checker (not compared)",
         sum(1 for c in comparisons if c.unstable)),
        ("wall time checked / plain (medians per program)", spread_text([c.ratio for c in comparisons])),
        ("wall time checked - plain, s", spread_text([c.checked_seconds - c.plain_seconds for c in comparisons])),
        ("noise: slowest / fastest plain run", spread_text([c.plain_spread for c in comparisons if c.plain_spread])),
        ("thresholds", f"checked > {MAX_RATIO:g} x plain and > plain + {MIN_EXTRA_SECONDS:g} s, "
                       f"or checked > plain + {MAX_EXTRA_SECONDS:g} s"),
    ]


# ---------------------------------------------------------------- one program (scripts/generated)

RECORD_FIELDS = ["name", "plain_s", "checked_s", "plain_spread", "differences", "unstable"]


def run_program(options):
    checked_prefix = shlex.split(options.checker)
    options.logs.mkdir(parents=True, exist_ok=True)
    ranks = ranks_of(options.command)

    def run(kind, number):
        command = options.command if kind == "plain" else checked_prefix + options.command
        return Job(command, None, None, options.time_limit, options.logs / f"{kind}-{number}").wait()

    plain, checked = [run("plain", 1)], []
    if plain[0].status != 0:
        print(f"{options.name}: failed without the checker (exit status {status_text(plain[0].status)}): "
              f"{plain[0].stderr[:300]!r}", flush=True)
        return 2
    checked.append(run("checked", 1))
    while len(plain) < (options.runs or runs_wanted(plain, checked)):
        plain.append(run("plain", len(plain) + 1))
        checked.append(run("checked", len(checked) + 1))
    comparison = compare(plain, checked, ranks)
    verdict = "DIFFERS" if comparison.differences else "same"
    unstable = f"; varies without the checker: {', '.join(comparison.unstable)}" if comparison.unstable else ""
    print(f"{options.name}: {verdict} ({times_text(plain, checked)}, x{comparison.ratio:.2f}){unstable}", flush=True)
    for difference in comparison.differences:
        print(f"  {options.name}: {difference}", flush=True)
    if options.record:
        with open(options.record, "a") as record:
            record.write("\t".join([options.name, f"{comparison.plain_seconds:.4f}",
                                    f"{comparison.checked_seconds:.4f}", f"{comparison.plain_spread:.4f}",
                                    " | ".join(comparison.differences), ", ".join(comparison.unstable)]) + "\n")
    return 1 if comparison.differences else 0


def ranks_of(command):
    """mpiexec's -n or -np, 1 if absent."""
    for option, value in zip(command, command[1:]):
        if option in ("-n", "-np") and value.isdigit():
            return int(value)
    return 1


def summarize_record(path):
    comparisons = []
    for line in Path(path).read_text().splitlines():
        fields = dict(zip(RECORD_FIELDS, line.split("\t")))
        comparisons.append(Comparison([d for d in fields["differences"].split(" | ") if d],
                                      [u for u in fields["unstable"].split(", ") if u],
                                      float(fields["plain_s"]), float(fields["checked_s"]),
                                      float(fields["plain_spread"])))
    for label, value in summary_rows(comparisons):
        print(f"{label + ':':<72} {value}")


def main():
    parser = argparse.ArgumentParser(prog="scripts/differential", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summarize", metavar="FILE", help="print the totals of a --record file and exit")
    parser.add_argument("--checker", help="the checked command's prefix, e.g. 'build/install/bin/mpisentry --'")
    parser.add_argument("--name", default="program", help="the program's name in the output")
    parser.add_argument("--runs", type=int, help=f"runs each way ({DEFAULT_RUNS}; 1 when the first plain "
                                                 f"run takes {LONG_RUN_SECONDS:g} s or more; "
                                                 f"{CONFIRMING_RUNS} more when those are too slow checked)")
    parser.add_argument("--time-limit", type=float, default=180, help="seconds per run (180)")
    parser.add_argument("--logs", type=Path, default=Path("."), help="where each run's .out and .err go (.)")
    parser.add_argument("--record", help="append the program's figures to this TSV file")
    parser.add_argument("command", nargs="*", help="the plain command, after --")
    options = parser.parse_args()
    if options.summarize:
        summarize_record(options.summarize)
        return 0
    if not options.checker or not options.command:
        parser.error("--checker and a command after -- are needed")
    if options.runs is not None and options.runs < 1:
        parser.error(f"--runs {options.runs}: must be at least 1")
    return run_program(options)


if __name__ == "__main__":
    sys.exit(main())
