#!/usr/bin/python3
"""Checks a run's CI reports (REPORT-JUNIT, REPORT-SARIF) the way CI systems
read them, and what they say:

- the SARIF log read into the SARIF 2.1.0 object model of Debian's
  python3-sarif-python-om (Microsoft's classes generated from the published
  schema): every object's properties known to its class, its required ones
  present, the version 2.1.0 and each level one SARIF defines;
- the JUnit file well-formed XML (xmllint, Debian's libxml2-utils) and read
  by Debian's python3-junitparser, the parser of a real consumer;
- each --expect RULE LEVEL FILE:LINE RANKS: a SARIF result of that rule and
  level with a location at that line of that file ("-" as RANKS: any ranks,
  else the location's message starts with "rank 1:" or "ranks 0-1:"), and
  JUnit's test case for it: a failure for an error, passing otherwise;
- no result of a rule not expected, and the same results in both files;
- a file named by a relative reference has a uriBaseId the run describes;
- with no --expect: no result, and the single passing test case "no reports".

Prints every problem found and exits 1, else exits 0."""
import argparse
import json
import subprocess
import sys

import attr
import sarif_om
from junitparser import Failure, JUnitXml

# The class of each object-valued property this checker follows: (class,
# property) -> (class, "one", "list" or "map"). An object-valued property not
# listed is a problem, so that the writer cannot grow unchecked.
SARIF_PROPERTIES = {
    (sarif_om.SarifLog, "runs"): (sarif_om.Run, "list"),
    (sarif_om.Run, "tool"): (sarif_om.Tool, "one"),
    (sarif_om.Run, "results"): (sarif_om.Result, "list"),
    (sarif_om.Run, "originalUriBaseIds"): (sarif_om.ArtifactLocation, "map"),
    (sarif_om.Tool, "driver"): (sarif_om.ToolComponent, "one"),
    (sarif_om.ToolComponent, "rules"): (sarif_om.ReportingDescriptor, "list"),
    (sarif_om.ReportingDescriptor, "shortDescription"): (sarif_om.MultiformatMessageString, "one"),
    (sarif_om.ReportingDescriptor, "defaultConfiguration"): (sarif_om.ReportingConfiguration, "one"),
    (sarif_om.Result, "message"): (sarif_om.Message, "one"),
    (sarif_om.Result, "locations"): (sarif_om.Location, "list"),
    (sarif_om.Result, "properties"): (sarif_om.PropertyBag, "one"),
    (sarif_om.Location, "message"): (sarif_om.Message, "one"),
    (sarif_om.Location, "physicalLocation"): (sarif_om.PhysicalLocation, "one"),
    (sarif_om.Location, "logicalLocations"): (sarif_om.LogicalLocation, "list"),
    (sarif_om.PhysicalLocation, "artifactLocation"): (sarif_om.ArtifactLocation, "one"),
    (sarif_om.PhysicalLocation, "region"): (sarif_om.Region, "one"),
    (sarif_om.ArtifactLocation, "description"): (sarif_om.Message, "one"),
}
LEVELS = {"none", "note", "warning", "error"}


def read_sarif(value, cls, path, problems):
    """Reads value as an object of sarif_om class cls, appending each problem
    with its JSON path."""
    if not isinstance(value, dict):
        problems.append(f"{path}: a {cls.__name__} must be an object, is {value!r}")
        return
    if cls is sarif_om.PropertyBag:
        return  # a property bag holds any properties
    fields = {field.metadata["schema_property_name"]: field for field in attr.fields(cls)}
    for name, field in fields.items():
        if field.default is attr.NOTHING and name not in value:
            problems.append(f"{path}: {cls.__name__} lacks its required property {name}")
    for name, item in value.items():
        if name not in fields:
            problems.append(f"{path}: {name} is no property of a SARIF {cls.__name__}")
        elif (cls, name) in SARIF_PROPERTIES:
            inner, shape = SARIF_PROPERTIES[(cls, name)]
            if shape == "one":
                read_sarif(item, inner, f"{path}.{name}", problems)
            elif shape == "list" and isinstance(item, list):
                for index, element in enumerate(item):
                    read_sarif(element, inner, f"{path}.{name}[{index}]", problems)
            elif shape == "map" and isinstance(item, dict):
                for key, element in item.items():
                    read_sarif(element, inner, f"{path}.{name}.{key}", problems)
            else:
                problems.append(f"{path}.{name}: must be a{'n array' if shape == 'list' else 'n object'}")
        elif isinstance(item, (dict, list)):
            problems.append(f"{path}.{name}: an object this checker does not follow (add it to SARIF_PROPERTIES)")
        if name == "level" and item not in LEVELS:
            problems.append(f"{path}.level: {item!r} is no SARIF level")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--junit", required=True)
    parser.add_argument("--sarif", required=True)
    parser.add_argument("--expect", nargs=4, action="append", default=[],
                        metavar=("RULE", "LEVEL", "FILE:LINE", "RANKS"))
    args = parser.parse_args()
    problems = []

    with open(args.sarif, encoding="utf-8") as file:
        sarif = json.load(file)
    read_sarif(sarif, sarif_om.SarifLog, args.sarif, problems)
    if sarif.get("version") != "2.1.0":
        problems.append(f"{args.sarif}: version {sarif.get('version')!r}, not 2.1.0")

    lint = subprocess.run(["xmllint", "--noout", args.junit], capture_output=True, text=True, check=False)
    if lint.returncode != 0:
        problems.append(f"{args.junit}: not well-formed XML: {lint.stderr.strip()}")

    cases = [case for suite in JUnitXml.fromfile(args.junit) for case in suite]
    run = sarif["runs"][0]
    results = run["results"]
    rules = run["tool"]["driver"].get("rules", [])

    if not args.expect:
        if results:
            problems.append(f"{args.sarif}: a clean run has results: {[r['ruleId'] for r in results]}")
        if len(cases) != 1 or cases[0].name != "no reports" or not cases[0].is_passed:
            problems.append(f"{args.junit}: a clean run wants one passing test case \"no reports\", has "
                            f"{[(case.classname, case.name, case.is_passed) for case in cases]}")

    for rule, level, place, ranks in args.expect:
        file_name, line = place.rsplit(":", 1)
        wanted_message = None if ranks == "-" else f"rank{'s' if '-' in ranks or ',' in ranks else ''} {ranks}:"

        def at_place(location):
            physical = location.get("physicalLocation", {})
            return (physical.get("artifactLocation", {}).get("uri", "").endswith("/" + file_name)
                    and physical.get("region", {}).get("startLine") == int(line)
                    and (wanted_message is None or location["message"]["text"].startswith(wanted_message)))

        found = [result for result in results if result["ruleId"] == rule and result["level"] == level
                 and any(at_place(location) for location in result["locations"])]
        if not found:
            problems.append(f"{args.sarif}: no {level} result of {rule} at {place} ({ranks}); results: "
                            + json.dumps([{"ruleId": r["ruleId"], "level": r["level"], "locations": r["locations"]}
                                          for r in results]))
        for result in found:
            index = result.get("ruleIndex", -1)
            if not 0 <= index < len(rules) or rules[index]["id"] != rule or not rules[index]["shortDescription"]["text"]:
                problems.append(f"{args.sarif}: result of {rule}: ruleIndex {index} names no rule of that id "
                                "with its help text")

    # A relative reference names its base, which the run describes.
    for result in results:
        for location in result["locations"]:
            artifact = location.get("physicalLocation", {}).get("artifactLocation", {})
            uri = artifact.get("uri", "")
            if uri and not uri.startswith("file://") and artifact.get("uriBaseId") not in run.get("originalUriBaseIds", {}):
                problems.append(f"{args.sarif}: relative {uri} without a uriBaseId that originalUriBaseIds describes")

    expected_rules = {rule for rule, _, _, _ in args.expect}
    for result in results:
        if result["ruleId"] not in expected_rules:
            problems.append(f"{args.sarif}: a result of {result['ruleId']}, not expected: {result['message']['text']}")

    # Both files hold the same reports: per rule, as many test cases as
    # results, failing exactly for the errors.
    for rule in {result["ruleId"] for result in results}:
        of_rule = [result for result in results if result["ruleId"] == rule]
        rule_cases = [case for case in cases if case.classname == "mpisentry." + rule]
        if len(rule_cases) != len(of_rule):
            problems.append(f"{args.junit}: {len(rule_cases)} test cases of {rule}, the SARIF log has "
                            f"{len(of_rule)} results")
        failing = of_rule[0]["level"] == "error"
        for case in rule_cases:
            failures = [item for item in case.result if isinstance(item, Failure)]
            if failing != bool(failures) or (failures and failures[0].type != rule):
                problems.append(f"{args.junit}: test case {case.name!r} of {rule}: "
                                f"{'a failure of type ' + rule if failing else 'passing'} wanted, has "
                                f"{[(type(item).__name__, item.type) for item in case.result]}")
            if not failing and not case.system_out:
                problems.append(f"{args.junit}: test case {case.name!r} of {rule}: no system-out with the report")

    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
