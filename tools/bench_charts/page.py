"""docs/PERFORMANCE.md's generated parts: the page is prose written by hand with marked sections

    <!-- generated: NAME -->
    ...
    <!-- end generated -->

whose contents this module writes from the runs (every table and number in them comes from the JSON), and
one line that names the JSON files the page is made from, relative to the page:

    <!-- bench_charts inputs: perf/json/bench_cuda_h200.json perf/json/bench_cpu_h200_host.json -->
"""

import os
import re
import sys

from .charts import chart_plan
from .names import fmt, levels, matmul_name, matmul_shapes, pow2, rate, reduce_sizes, sweep_name, table
from .tables import (deterministic_table, device_of, gpu_overhead_table, hopper_table, host_table, matmul_table,
                     multi_gpu_counts, multi_table, per_table, reduce_grid, reduce_table, suite_of, types_table)

SECTION = re.compile(r"(<!-- generated: ([a-z0-9-]+) -->\n)(.*?)(<!-- end generated -->)", re.S)
INPUTS = re.compile(r"<!-- bench_charts inputs: (.*?) -->")


def page_inputs(path):
    """The JSON files the page names (as paths usable from here), or None."""
    with open(path) as f:
        m = INPUTS.search(f.read())
    if not m:
        return None
    return [os.path.join(os.path.dirname(path), p) for p in m.group(1).split()]


# ---- Sections ----------------------------------------------------------------------------------------


def caches(context):
    out = []
    for c in context.get("caches", []):
        if c.get("type") == "Instruction":
            continue
        size = c["size"]
        shown = "%d MiB" % (size >> 20) if size >= 1 << 20 and size % (1 << 20) == 0 else "%d KiB" % (size >> 10)
        out.append("L%d %s%s" % (c["level"], shown, " per core" if c.get("num_sharing", 0) == 1 else ""))
    return ", ".join(out)


def host_of(context):
    text = "%s CPUs at %s MHz" % (context.get("num_cpus", "?"), context.get("mhz_per_cpu", "?"))
    return text + ("; " + caches(context) if context.get("caches") else "")


def link(path, page_dir):
    """A markdown link to an input file, relative to the page."""
    return "[%s](%s)" % (os.path.basename(path), os.path.relpath(path, page_dir).replace(os.sep, "/"))


def run_notes(runs):
    """The files whose context carries a tandem_run_note (how the run was made), one sentence each."""
    out = []
    for run in runs.values():
        for path, c in run.sources:
            note = c.get("tandem_run_note")
            if note:
                out.append("`%s` is %s." % (os.path.basename(path), note.rstrip(".")))
    return " ".join(out)


def machines(runs, multi, page_dir):
    rows = []
    for backend, run in runs.items():
        for path, c in run.sources:
            device = device_of(backend, c)
            if backend == "cuda":
                units = c.get("tandem_compute_units")
                peak = c.get("tandem_peak_bandwidth_gbs")
                extra = ["%s SMs" % units] if units else []
                if peak:
                    extra.append("memory %s GB/s peak" % fmt(float(peak)))
                device += " (%s)" % ", ".join(extra) if extra else ""
            rows.append(["`%s`" % suite_of(c), link(path, page_dir), device, c.get("tandem_device_details", ""),
                         host_of(c), c.get("date", "?")[:10], c.get("library_build_type", "?")])
    for m in multi:
        c = m.context
        device = "%d GPUs (the JSON does not name them)" % max(multi_gpu_counts(m))
        rows.append(["`%s`" % suite_of(c), link(m.path, page_dir), device, "", host_of(c), m.date(),
                     c.get("library_build_type", "?")])
    text = table(["suite", "JSON", "device", "details", "host", "date", "Google Benchmark build"], rows)
    notes = run_notes(runs)
    return text + ("\n" + notes + "\n" if notes else "")


def targets_summary(targets):
    status = [row[4] for row in targets.rows]
    met, missed = status.count("meets"), status.count("misses")
    text = "%d targets: %d met, %d missed" % (len(status), met, missed)
    other = len(status) - met - missed
    return text + (", %d not measured." % other if other else ".")


def gpu_sweep(run):
    """The read sweep of the largest float input against the device's peak bandwidth."""
    sizes = reduce_sizes(run, "kernel", "float")
    if not sizes:
        return ""
    n = sizes[-1]
    sweep = rate(run, sweep_name(run, "kernel", "float", n))
    peak = run.context.get("tandem_peak_bandwidth_gbs")
    text = "The read sweep of %s floats runs at %s GB/s" % (pow2(n), fmt(sweep))
    if peak and sweep:
        text += ", %s%% of the %s GB/s that the device's memory clock and bus width give" % (
            fmt(100 * sweep / float(peak)), fmt(float(peak)))
    return text + "."


def engine_floor(run):
    engine = run.get("overhead/%s/engine/sum/float/n:16" % run.backend, "time_ns")
    if engine is None:
        return ""
    if run.get("overhead/%s/engine/sum/float/n:16" % run.backend, "iterations") == 1:
        floor = run.get("overhead/%s/raw_backend/sum/float/n:16" % run.backend, "time_ns")
        # (One iteration is the first call, start-up included: not what a call costs, so not shown.)
        return ("An engine call on the GPU waits for its result: a sum of 16 floats through the backend directly "
                "(`BackendImpl::reduce()`) takes %s µs, so engine-level rates of small inputs measure that floor, "
                "not the kernel." % (fmt(floor / 1e3) if floor else "-"))
    return ("An engine call on the GPU waits for its result: `engine.sum()` of 16 floats takes %s µs, so "
            "engine-level rates of small inputs measure that floor, not the kernel." % fmt(engine / 1e3))


def cpu_overhead(run):
    engine = run.get("overhead/cpu/engine/sum/float/n:16", "time_ns")
    raw = run.get("overhead/cpu/raw_backend/sum/float/n:16", "time_ns")
    if engine is None or raw is None:
        return ""
    return ("`engine.sum()` of 16 floats takes %s ns on the CPU, the same reduction through "
            "`BackendImpl::reduce()` (no validation, no kernel lookup) %s ns: the engine's checks cost %s ns "
            "a call." % (fmt(engine), fmt(raw), fmt(engine - raw)))


def console(value, rate=True):
    """A counter as Google Benchmark's console prints it with decimal prefixes (six significant digits)."""
    for unit, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
        if abs(value) >= unit:
            break
    return "%g%s%s" % (value / unit, prefix, "/s" if rate else "")


def counters(runs):
    """The counters table, its console examples taken from the runs (GPU where there is one)."""
    run = runs.get("cuda") or runs.get("cpu")
    examples = {}
    if run is not None:
        level = "kernel" if "kernel" in levels(run) else "engine"
        sizes = reduce_sizes(run, level, "float")
        if sizes:
            r = run.results.get("%sauto/sum/float/n:%d" % (("kernel/%s/" if level == "kernel" else "reduce/%s/") %
                                                             run.backend, sizes[-1]), {})
            if r.get("GB/s"):
                examples["bytes"] = console(r["GB/s"] * 1e9)
                if r.get("pct_sweep"):
                    examples["sweep"] = console(r["GB/s"] * 1e9 * 100 / r["pct_sweep"], rate=False)
        flops = [rate(run, matmul_name(run, "engine", "auto", "float", s), "TFLOP/s")
                 for s in matmul_shapes(run, "engine", "float") if "x" not in s]
        flops = [f for f in flops if f]
        if flops:  # "auto" at the largest square shape it ran
            examples["flop"] = console(flops[-1] * 1e12)
    show = lambda name, key: "`%s=%s`" % (name, examples[key]) if key in examples else ""  # noqa: E731
    rows = [["`bytes_per_second`", "input bytes read per second (the AoS family counts the useful bytes only)",
             show("bytes_per_second", "bytes")],
            ["`sweep_bytes_per_second`", "the read sweep's rate for the same number of bytes, measured in the same "
             "process (at the kernel level the batched sweep, so both sides are timed alike); not a rate of this "
             "benchmark, so printed without `/s`", show("sweep_bytes_per_second", "sweep")],
            ["`flop_per_second`", "2·m·n·k floating-point operations per second (matrix products; batches count "
             "every entry)", show("flop_per_second", "flop")],
            ["`calls_per_iteration`", "kernel level: calls per pair of CUDA events", ""],
            ["`threads`", "`baseline/eigen_gemm_openmp`: Eigen's OpenMP threads", ""]]
    return table(["counter", "meaning", "console, e.g."], rows)


def cpu_reduce(run):
    sizes = reduce_sizes(run, "engine", "float")
    return ("GB/s (%% of the read sweep of the same bytes), engine level, n = %s:\n\n%s" %
            (pow2(sizes[-1]), reduce_grid(run, "engine")))


def charts(runs):
    return "\n".join("![%s](perf/%s)" % (alt, name) for name, alt, _ in chart_plan(runs))


def sections(runs, multi, targets, page_dir):
    """NAME -> text of every section the page may have (empty where the runs lack the data)."""
    cuda, cpu = runs.get("cuda"), runs.get("cpu")
    has = lambda run, level: run is not None and level in levels(run)  # noqa: E731
    cpu_n = reduce_sizes(cpu, "engine", "float") if has(cpu, "engine") else []
    return {
        "machines": lambda: machines(runs, multi, page_dir),
        "counters": lambda: counters(runs),
        "charts": lambda: charts(runs),
        "targets-summary": lambda: targets_summary(targets),
        "targets": lambda: targets.markdown(),
        "gpu-sweep": lambda: gpu_sweep(cuda) if has(cuda, "kernel") else "",
        "gpu-sum-ladder": lambda: reduce_table(cuda, "kernel", "sum", "float") if has(cuda, "kernel") else "",
        "gpu-gemm-float": lambda: matmul_table(cuda, "engine", "float") if has(cuda, "engine") else "",
        "gpu-gemm-double": lambda: matmul_table(cuda, "engine", "double") if has(cuda, "engine") else "",
        "gpu-hopper": lambda: hopper_table(cuda) if cuda else "",
        "gpu-floor": lambda: engine_floor(cuda) if cuda else "",
        "gpu-overhead": lambda: gpu_overhead_table(cuda) if cuda else "",
        "gpu-per": lambda: per_table(cuda) if cuda else "",
        "gpu-host": lambda: host_table(cuda) if cuda else "",
        "cpu-reduce": lambda: cpu_reduce(cpu) if cpu_n else "",
        "gpu-types": lambda: types_table(cuda) if cuda else "",
        "cpu-types": lambda: types_table(cpu) if cpu else "",
        "cpu-gemm": lambda: matmul_table(cpu, "engine", "float") if has(cpu, "engine") else "",
        "cpu-overhead": lambda: cpu_overhead(cpu) if cpu else "",
        "multi-gpu": lambda: multi_table(multi[-1]) if multi else "",
        "deterministic": lambda: deterministic_table(runs, multi),
    }


def fill(text, made, where):
    """The page with every marked section's contents replaced; an unknown NAME is an error."""

    def replace(m):
        name = m.group(2)
        if name not in made:
            sys.exit("bench_charts: %s: unknown section '%s' (known: %s)" % (where, name, ", ".join(sorted(made))))
        body = made[name]().strip("\n")
        if not body:
            body = "(not in the runs given)"
        # Tables and paragraphs need blank lines around them; sentences do too, to stay paragraphs.
        return "%s\n%s\n\n%s" % (m.group(1), body, m.group(4))

    return SECTION.sub(replace, text)


# A measured-looking number: digits followed by a unit of rate, time or ratio.
MEASURED = re.compile(r"(?<![\w.^/])\d[\d,]*(\.\d+)?(\s*((GB/s|TB/s|[TGM]FLOP/s|µs|us|ns|ms)(?!\w)|×|%)|x(?![\w^]))")


def stray_numbers(text):
    """(line number, line) of the hand-written prose that states a measured-looking number: outside the
    generated sections, code blocks, inline code and HTML comments, numbers belong in a generated section."""
    out = []
    blanked = SECTION.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # keep the line numbers
    fence = False
    for i, line in enumerate(blanked.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence or line.startswith("    "):
            continue
        prose = re.sub(r"`[^`]*`|<!--.*?-->|\]\([^)]*\)", "", line)
        if MEASURED.search(prose):
            out.append((i, line))
    return out


def write_page(path, runs, multi, targets):
    """Fills the page's sections; returns whether it changed. Exits with an error, after writing, when the
    hand-written prose states a measured-looking number."""
    with open(path) as f:
        text = f.read()
    new = fill(text, sections(runs, multi, targets, os.path.dirname(os.path.abspath(path))), path)
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    stray = stray_numbers(new)
    for line, content in stray:
        print("%s:%d: a number outside the generated sections (make it a section of bench_charts/page.py, "
              "or drop it): %s" % (path, line, content.strip()), file=sys.stderr)
    if stray:
        sys.exit(1)
    return new != text

