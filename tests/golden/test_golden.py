"""Every registered algorithm at its defaults and at each golden seed gives the results table (and the curve,
records and info) stored in tests/golden/fingerprints.json; tests/golden/make_golden.py says how it is made."""

import os

import pytest

from tests.golden import make_golden as golden

STORED = golden.load()
REGISTERED = golden.algorithms()
RUN_SLOW = os.environ.get(golden.ENV_ALL, "") == "1"


def _cases():
    stored = (STORED or {}).get("algorithms", {})
    for name in dict.fromkeys([*REGISTERED, *stored]):
        for seed in golden.SEEDS:
            entry = stored.get(name, {}).get(str(seed))
            marks = [pytest.mark.slow] if entry is not None and entry.get("slow") else []
            yield pytest.param(name, seed, entry, id=f"{name}-seed{seed}", marks=marks)


def test_file_is_current():
    """The stored file is of this serialisation, excludes the same columns, and its cells give its fingerprints."""
    assert STORED is not None, f"{golden.GOLDEN} is missing: generate it with {golden.REGENERATE}"
    header = golden.header()
    for key in ("serialisation_version", "seeds", "excluded_columns"):
        assert STORED.get(key) == header[key], (
            f"{golden.GOLDEN}: {key} is {STORED.get(key)!r}, make_golden now says {header[key]!r}; {golden.WHAT_TO_DO}"
        )
    for name, runs in STORED["algorithms"].items():
        for seed, entry in runs.items():
            assert golden.table_fingerprint(entry["cells"]) == entry["table"], (
                f"{name} seed {seed}: the stored cells do not give the stored table fingerprint (edited by hand?); "
                f"regenerate with {golden.REGENERATE}"
            )
            if "parts" in entry:
                assert golden.records_fingerprint(entry["parts"]) == entry["records"], (
                    f"{name} seed {seed}: the stored parts do not give the stored records fingerprint; "
                    f"regenerate with {golden.REGENERATE}"
                )


@pytest.mark.parametrize(("name", "seed", "entry"), list(_cases()))
def test_golden(name, seed, entry):
    if name not in REGISTERED:
        pytest.fail(
            f"{name} seed {seed}: has golden fingerprints but is no longer registered (its results are "
            f"lost); {golden.WHAT_TO_DO}"
        )
    if entry is None:
        pytest.fail(
            f"{name} seed {seed}: registered but has no golden fingerprint; generate it with {golden.REGENERATE}"
        )
    if entry.get("slow") and not RUN_SLOW:
        pytest.skip(
            f"{name} seed {seed}: slow golden run ({entry['seconds']:.0f} s when recorded); "
            f"set {golden.ENV_ALL}=1 to run it"
        )
    new = golden.fingerprint(name, seed)
    changes = golden.entry_changes(entry, new)
    assert not changes, (
        f"golden fingerprint of {name} at its defaults, seed {seed}, changed:\n  "
        + "\n  ".join(changes)
        + f"\n{golden.WHAT_TO_DO}"
    )
