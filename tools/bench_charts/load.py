"""Reading Google Benchmark JSON into one Run per backend (medians of repetitions) with the kernel
metadata of the engine that ran it."""

import json
import os
import statistics
import sys

from .names import strip_suffix, unique

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# The rates the tables and charts use. bench_* write bytes_per_second, sweep_bytes_per_second and
# flop_per_second (plain bytes or FLOP per second); runs made before that wrote these four names
# themselves, which are read as they are (rates_of).
RATE_KEYS = ("GB/s", "pct_sweep", "TFLOP/s", "GFLOP/s")


def rates_of(b):
    """The RATE_KEYS of one benchmark entry, from the counters of either naming."""
    values = {k: b[k] for k in RATE_KEYS if k in b}
    bps, sweep = b.get("bytes_per_second"), b.get("sweep_bytes_per_second")
    if "GB/s" not in values and bps is not None:
        values["GB/s"] = bps / 1e9
    if "pct_sweep" not in values and bps is not None and sweep:
        values["pct_sweep"] = 100.0 * bps / sweep
    flop = b.get("flop_per_second")
    if flop is not None:
        values.setdefault("TFLOP/s", flop / 1e12)
        values.setdefault("GFLOP/s", flop / 1e9)
    return values


def warn(message):
    print("bench_charts: %s" % message, file=sys.stderr)


class Run:
    """The benchmarks of one backend: name (without the time suffix) -> dict of values, in file order,
    and its kernels' metadata: (kind, name) -> {"precision", "baseline", ...}."""

    def __init__(self, backend, context, path, vendor_baselines=()):
        self.backend = backend
        self.vendor_baselines = vendor_baselines  # for metadata without a "baseline" field
        self.context = context
        self.path = path
        self.sources = [(path, context)]  # every JSON file of this backend, in input order
        self.results = {}
        self.errors = {}
        self.kernels = {}
        self._unknown = set()

    def get(self, name, key):
        r = self.results.get(name)
        return None if r is None else r.get(key)

    def names(self, prefix):
        return [n for n in self.results if n.startswith(prefix)]

    def device(self):
        c = self.context
        device = c.get("tandem_device", "?")
        if self.backend == "cpu":
            device += " (%s cores)" % c.get("tandem_compute_units", c.get("num_cpus", "?"))
        return device

    def date(self):
        return self.context.get("date", "?")[:10]

    # ---- Kernel metadata

    def kernel(self, kind, name):
        info = self.kernels.get((kind, name))
        if info is None:
            if (kind, name) not in self._unknown:
                self._unknown.add((kind, name))
                warn("%s: no metadata for %s kernel '%s': taken as full precision" % (self.path, kind, name))
            info = {"name": name, "precision": "full"}
        return info

    def precision(self, kind, name):
        return self.kernel(kind, name).get("precision", "full")

    def is_baseline(self, kind, name):
        info = self.kernel(kind, name)
        return bool(info["baseline"]) if "baseline" in info else name in self.vendor_baselines

    def is_own(self, kind, name):
        """A stage of the engine's own: not "auto", not a vendor baseline."""
        return name != "auto" and not self.is_baseline(kind, name)

    def baselines(self, kind):
        return [name for (k, name) in self.kernels if k == kind and self.is_baseline(kind, name)]


def kernel_list(data, where):
    """The metadata list: `tandem kernels --json` output or the context's "tandem_kernels"."""
    if isinstance(data, dict):  # {"kernels": [...]} or {"reduce": [...], "matmul": [...]}
        if "kernels" in data:
            data = data["kernels"]
        else:
            data = [dict(k, kind=kind) for kind in ("reduce", "matmul") for k in data.get(kind, [])]
    if not isinstance(data, list) or not all(isinstance(k, dict) and "name" in k and "kind" in k for k in data):
        sys.exit("bench_charts: %s: kernel metadata is not a list of {\"name\", \"kind\", ...}" % where)
    return data


def read_kernels(path, context, backend, kernels_file):
    """The metadata of one input: its context first, then --kernels, then kernels_<backend>.json beside it."""
    if "tandem_kernels" in context:
        return kernel_list(json.loads(context["tandem_kernels"]), "%s: context tandem_kernels" % path)
    source = kernels_file or os.path.join(os.path.dirname(path), "kernels_%s.json" % backend)
    if not os.path.exists(source):
        sys.exit("bench_charts: %s: no kernel metadata: its context has no \"tandem_kernels\" and %s does not "
                 "exist (write it with `tandem kernels --json`, or give --kernels FILE)" % (path, source))
    with open(source) as f:
        return kernel_list(json.load(f), source)


def read_results(data):
    """(results, errors) of one JSON file: name (without the time suffix) -> dict of values, the median
    of its repetitions; name -> error message for benchmarks that reported one."""
    results, errors = {}, {}
    samples = {}  # name -> list of per-repetition dicts
    medians = {}  # name -> Google Benchmark's own median aggregate
    for b in data.get("benchmarks", []):
        name = strip_suffix(b.get("run_name", b["name"]))
        if b.get("error_occurred"):
            errors[name] = b.get("error_message", "error")
            continue
        values = rates_of(b)
        values["time_ns"] = b["real_time"] * TO_NS.get(b.get("time_unit", "ns"), 1.0)
        for k in ("label", "calls_per_iteration", "threads", "iterations"):
            if k in b:
                values[k] = b[k]
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = values
            continue
        samples.setdefault(name, []).append(values)
    for name in unique(list(samples) + list(medians)):  # aggregates only: --benchmark_report_aggregates_only
        reps = samples.get(name, [])
        if name in medians:
            value = medians[name]
            if reps and "label" in reps[0]:
                value.setdefault("label", reps[0]["label"])
        elif len(reps) == 1:
            value = reps[0]
        else:
            value = dict(reps[0])
            for k in list(RATE_KEYS) + ["time_ns"]:
                if k in reps[0]:
                    value[k] = statistics.median(r[k] for r in reps)
        results[name] = value
    return results, errors


class MultiRun:
    """A bench_multi_gpu run: multi/... benchmarks with gpus:<g> in their names, no kernel metadata."""

    def __init__(self, context, path, results, errors):
        self.context, self.path, self.results, self.errors = context, path, results, errors

    def date(self):
        return self.context.get("date", "?")[:10]


def is_multi_gpu(data):
    context = data.get("context", {})
    return "bench_multi_gpu" in context.get("executable", "") or any(
        b.get("name", "").startswith("multi/") for b in data.get("benchmarks", []))


def load(paths, kernel_files=(), vendor_baselines=()):
    """(runs, multi): one Run per backend, and the bench_multi_gpu runs (MultiRun) in input order.
    kernel_files[i]: the metadata file of paths[i] (None or absent: the default); vendor_baselines: the
    kernels taken as vendor baselines where the metadata has no "baseline" field (targets.json)."""
    runs, multi = {}, []
    for i, path in enumerate(paths):
        with open(path) as f:
            data = json.load(f)
        context = data.get("context", {})
        if is_multi_gpu(data):
            multi.append(MultiRun(context, path, *read_results(data)))
            continue
        backend = context.get("tandem_backend", "cuda" if "bench_cuda" in context.get("executable", "") else "cpu")
        run = runs.get(backend)
        if run is None:
            run = Run(backend, context, path, vendor_baselines)
        else:  # a further file of the same backend adds its benchmarks; the first file's context stays the run's
            run.sources.append((path, context))
        kernels_file = kernel_files[i] if i < len(kernel_files) else None
        for k in read_kernels(path, context, backend, kernels_file):
            run.kernels[(k["kind"], k["name"])] = k
        results, errors = read_results(data)
        both = [n for n in results if n in run.results]
        if both:
            warn("%s: %d benchmarks of the %s run are in an earlier file too (e.g. %s): this file's results "
                 "replace them" % (path, len(both), backend, both[0]))
        run.results.update(results)
        run.errors.update(errors)
        runs[backend] = run
    return runs, multi
