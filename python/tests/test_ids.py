"""Entry IDs and target IDs, by core's rules."""

from __future__ import annotations

import pytest

import clangoffload as co


def test_entry_id_parts() -> None:
    e = co.EntryId("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+")
    assert (e.kind, e.arch, e.triple, e.target_id) == ("hipv4", "amdgcn", "amdgcn-amd-amdhsa-", "gfx90a:xnack+")
    assert e.processor == "gfx90a" and not e.is_host
    assert e.target == co.TargetId("gfx90a:xnack+")
    assert str(e) == "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
    assert e == co.EntryId("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+") and len({e, co.EntryId(str(e))}) == 1
    assert co.EntryId("host-x86_64-unknown-linux-gnu-").is_host
    assert co.EntryId("hip-amdgcn-amd-amdhsa--gfx9-4-generic").processor == "gfx9-4-generic"


def test_compatibility_as_llvm_rules_it() -> None:
    stored = co.EntryId("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+")
    assert stored.is_compatible_with(co.EntryId("hip-amdgcn-amd-amdhsa--gfx90a:xnack+"))
    assert not stored.is_compatible_with(co.EntryId("hip-amdgcn-amd-amdhsa--gfx90a"))
    assert co.EntryId("hip-amdgcn-amd-amdhsa--gfx90a").is_compatible_with(co.EntryId("hip-amdgcn-amd-amdhsa--gfx90a:xnack+"))
    assert not co.EntryId("openmp-amdgcn-amd-amdhsa--gfx906").is_compatible_with(co.EntryId("hip-amdgcn-amd-amdhsa--gfx906"))
    assert co.EntryId("openmp-amdgcn-amd-amdhsa--gfx906").is_compatible_with(
        co.EntryId("hip-amdgcn-amd-amdhsa--gfx906"), hip_openmp_compatible=True
    )
    # LLVM 16 wrote the processor where the environment goes.
    old = co.EntryId("hip-amdgcn-amd-amdhsa-gfx906")
    assert not old.is_compatible_with(co.EntryId("hip-amdgcn-amd-amdhsa--"))
    assert old.bundler_matches(co.EntryId("hip-amdgcn-amd-amdhsa--"))


def test_normalisation() -> None:
    assert co.normalize_entry_id("hip-amdgcn-amd-amdhsa-unknown-gfx906") == "hip-amdgcn-amd-amdhsa--gfx906"
    assert co.EntryId("host-x86_64-unknown-linux-gnu").normalized() == "host-x86_64-unknown-linux-gnu-"


def test_target_ids() -> None:
    t = co.TargetId("gfx90a:xnack-:sramecc+")
    assert (t.processor, t.canonical, t.xnack, t.sramecc) == ("gfx90a", "gfx90a:sramecc+:xnack-", "off", "on")
    assert t == co.TargetId("gfx90a:sramecc+:xnack-") and hash(t) == hash(co.TargetId("gfx90a:sramecc+:xnack-"))
    assert co.TargetId("fiji").processor == "gfx803"
    assert co.TargetId("gfx90a").xnack == "any"
    assert co.TargetId("gfx90a").is_compatible_with(co.TargetId("gfx90a:xnack+"))
    assert not co.TargetId("gfx90a:xnack+").is_compatible_with(co.TargetId("gfx90a"))
    assert t.conflicts_with(co.TargetId("gfx90a:xnack-"))
    assert not t.conflicts_with(co.TargetId("gfx906"))


@pytest.mark.parametrize(
    "text, kind, offset",
    [("gfx90a:xnack", "MissingFeatureSign", 7), ("gfx90a:foo+", "UnknownFeature", 7), ("gfx9999", "UnknownProcessor", None), ("", "EmptyProcessor", None)],
)
def test_bad_target_ids(text: str, kind: str, offset: int | None) -> None:
    with pytest.raises(co.InvalidIdError) as e:
        co.TargetId(text)
    assert (e.value.kind, e.value.offset) == (kind, offset)
    assert isinstance(e.value, co.Error)


def test_bad_entry_ids() -> None:
    with pytest.raises(co.InvalidIdError) as e:
        co.EntryId("hip-amdgcn")
    assert e.value.kind == "TooFewComponents"
