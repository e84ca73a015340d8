"""Generated docs are up to date with the code."""
from pathlib import Path

from handfoot_env.docgen import actions_md, observation_md

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_observation_doc_up_to_date():
    assert (DOCS / "observation.md").read_text() == observation_md()


def test_action_doc_up_to_date():
    assert (DOCS / "actions.md").read_text() == actions_md()
