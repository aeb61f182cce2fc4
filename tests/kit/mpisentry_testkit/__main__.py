"""The kit from a shell script (python3 -m mpisentry_testkit ...):

  run LIMIT OUT ERR -- COMMAND...   runs COMMAND as the kit's Job: its own process group,
                                    killed as a group past LIMIT seconds; stdout to OUT,
                                    stderr to ERR; exits with its status, 124 on timeout
  checks REPORT.json                prints the check of each verdict of the JSON report
                                    and of its ranks' own, one a line (nothing: no report)
"""
import sys

from .jobs import Job
from .report import read_reports

TIMED_OUT = 124     # as timeout(1)


def main(argv):
    if len(argv) >= 5 and argv[0] == "run" and argv[4] == "--":
        limit, out, err, command = float(argv[1]), argv[2], argv[3], argv[5:]
        job = Job(command, time_limit=limit)
        result = job.wait()
        with open(out, "w") as stream:
            stream.write(result.stdout)
        with open(err, "w") as stream:
            stream.write(result.stderr)
        return TIMED_OUT if result.status is None else (result.status if result.status >= 0
                                                         else 128 - result.status)
    if len(argv) == 2 and argv[0] == "checks":
        for verdict in read_reports(argv[1]):
            print(verdict.check)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
