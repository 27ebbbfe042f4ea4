#!/usr/bin/env python3
"""Reads a Swift Testing event stream (swift test --event-stream-output-path F
--event-stream-version 0, JSON lines) and prints one line per test function:

    STATE<TAB>FILTER<TAB>DISPLAY NAME

STATE is passed, failed (an issue that is not a known issue), unfinished (started and never
ended: the process hung or died inside it), notrun (planned, never started) or skipped.
FILTER is a --filter pattern for that test alone: its ID without the source location, each part
regex-escaped, '.' for the '/' or '.' between parts. Used by Scripts/jack-suite.sh, which reads
the stream as it is written, so a test that hangs is named and the others are not lost.
"""
import json
import re
import sys


def filter_pattern(test_id):
    parts = test_id.split("/")
    if parts and re.search(r"\.swift:\d+:\d+$", parts[-1]):
        parts = parts[:-1]
    pieces = []
    for part in parts:
        pieces.extend(part.split("."))
    return ".".join(re.escape(piece) for piece in pieces)


def main(path):
    planned = {}   # id -> display name, test functions only, in plan order
    started, ended, failed, skipped = set(), set(), set(), set()
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return 1
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue   # a line cut short by a kill
        payload = record.get("payload", {})
        if record.get("kind") == "test":
            if payload.get("kind") == "function":
                planned[payload["id"]] = payload.get("displayName") or payload.get("name", "")
            continue
        kind, test_id = payload.get("kind"), payload.get("testID")
        if test_id is None:
            continue
        if kind == "testStarted":
            started.add(test_id)
        elif kind == "testEnded":
            ended.add(test_id)
        elif kind == "testSkipped":
            skipped.add(test_id)
        elif kind == "issueRecorded":
            issue = payload.get("issue", {})
            if not issue.get("isKnown", False) and issue.get("severity", "error") != "warning":
                # An issue recorded outside a test function (in a suite) belongs to its tests:
                # mark every planned test under that ID.
                for candidate in planned:
                    if candidate == test_id or candidate.startswith(test_id + "/"):
                        failed.add(candidate)
    for test_id, name in planned.items():
        if test_id in skipped:
            state = "skipped"
        elif test_id not in started:
            state = "notrun"
        elif test_id not in ended:
            state = "unfinished"
        elif test_id in failed:
            state = "failed"
        else:
            state = "passed"
        print(f"{state}\t{filter_pattern(test_id)}\t{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
