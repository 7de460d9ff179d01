"""Which predicates name a role one holder has at a time, and so have rivals."""

from __future__ import annotations

import pytest

from noema.model.roles import is_role

# the role predicates the built-in extractor writes on tests/data/time_cases, and others
ROLES = ["chief_executive_of", "ceo_of", "chairman_of", "coach", "lead", "play_for", "own"]
ROLES += ["capital_of", "editor_of", "former_mayor_of", "marry", "spouse_of", "maintainer_of"]
ROLES += ["president_of", "manage", "director_of", "head_in", "sign_for"]
# acts and ties that all hold together
NOT_ROLES = ["acquire", "found", "founder_of", "co_founder_of", "member_of", "join", "buy"]
NOT_ROLES += ["sell_to", "open", "play", "son_of", "study_at", "headquarter_in", "build_for"]


@pytest.mark.parametrize("predicate", ROLES)
def test_a_role_is_read(predicate: str) -> None:
    assert is_role(predicate)


@pytest.mark.parametrize("predicate", NOT_ROLES)
def test_an_act_or_tie_is_no_role(predicate: str) -> None:
    assert not is_role(predicate)
