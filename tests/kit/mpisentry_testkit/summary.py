"""Counts outcomes and prints them as a table of label, count."""
import collections


class Summary:
    def __init__(self):
        self.counts = collections.Counter()
        self.order = []

    def add(self, label, count=1):
        if label not in self.counts:
            self.order.append(label)
        self.counts[label] += count

    def __getitem__(self, label):
        return self.counts[label]

    def total(self):
        return sum(self.counts.values())

    def lines(self, width=44):
        return [f"{label:<{width}} {self.counts[label]:>6}" for label in self.order]

    def print(self, out=None, width=44):
        import sys
        for line in self.lines(width):
            print(line, file=out or sys.stdout)
