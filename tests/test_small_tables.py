"""What a refused run suggests: never an option that would be refused too (issue 30, item 6)."""

from __future__ import annotations

import pytest

from synth.describer import check_discovery
from synth.discovery import Discovery, Finding
from synth.errors import DiscoveryError
from synth.kinds import Kind


def _discovery(*verdicts: tuple[str, Kind]) -> Discovery:
    findings = tuple(Finding(f"c{i}", kind, verdict, "detail") for i, (verdict, kind) in enumerate(verdicts))
    return Discovery({}, findings)


def test_the_lost_columns_message_suggests_leaving_them_out_only_when_something_would_be_left():
    with pytest.raises(DiscoveryError) as some:
        check_discovery(_discovery(("lost", Kind.INTEGER), ("rough", Kind.FLOAT)), False, [])
    assert "--accept-rough-domains (accept_rough_domains = true" in str(some.value)
    for nothing_left in (_discovery(("lost", Kind.INTEGER), ("lost", Kind.CATEGORICAL)),
                         _discovery(("lost", Kind.INTEGER), ("located", Kind.ID))):
        with pytest.raises(DiscoveryError) as none:
            check_discovery(nothing_left, False, [])
        assert "would be refused too" in str(none.value) and "or pass --accept-rough-domains" not in str(none.value)
    with pytest.raises(DiscoveryError) as given:  # columns whose domains the profile gives are released anyway
        check_discovery(_discovery(("lost", Kind.INTEGER)), False, [], others=True)
    assert "or pass --accept-rough-domains" in str(given.value)
    with pytest.raises(DiscoveryError, match="in a profile"):
        check_discovery(_discovery(("lost", Kind.INTEGER)), True, [])
