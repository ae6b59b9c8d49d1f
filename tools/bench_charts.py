#!/usr/bin/python3
"""Runs the chart package tools/bench_charts/ (see its __init__.py; also: python3 -m tools.bench_charts)."""
from bench_charts.__main__ import main  # tools/ is sys.path[0], and a package wins over this file's name

main()
