"""Where a benchmark writes: a full run updates the committed tables and figures in docs/results/; a
``--quick`` (smoke) run writes to build/benchmarks/ (gitignored), so it never overwrites them."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def results_dir(quick: bool) -> Path:
    """The output directory of a full (``quick=False``) or quick run, created if missing."""
    out = ROOT / ("build/benchmarks" if quick else "docs/results")
    out.mkdir(parents=True, exist_ok=True)
    return out
