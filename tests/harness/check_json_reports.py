#!/usr/bin/python3
"""check_json_reports.py SCHEMA DIR: validates every JSON report in DIR (the
integration tests keep each job's there) against the JSON Schema SCHEMA, with
Debian's python3-jsonschema. Exit status 1 when one is invalid."""

import json
import pathlib
import sys

import jsonschema


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path, reports_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    reports = sorted(reports_dir.glob("*.json")) if reports_dir.is_dir() else []
    invalid = 0
    for report in reports:
        try:
            errors = list(validator.iter_errors(json.loads(report.read_bytes())))
        except json.JSONDecodeError as error:
            errors = [f"not JSON: {error}"]
        for error in errors[:5]:
            where = "/".join(map(str, error.absolute_path)) if hasattr(error, "absolute_path") else ""
            message = error.message if hasattr(error, "message") else error
            print(f"{report}: at /{where}: {message}")
        invalid += bool(errors)
    print(f"{len(reports)} JSON reports checked against {schema_path}: {invalid} invalid")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
