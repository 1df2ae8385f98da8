"""The README and docs stand on their own in a clone (issue 22, item 10: the README sent readers
to ../shared/DESIGN.md and ../shared/kernelbench, which a clone does not have): every relative
link of README.md and docs/*.md names a file or folder inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _relative_targets(page: Path) -> list[str]:
    targets = [t.split("#", 1)[0] for t in LINK.findall(page.read_text())]
    return [t for t in targets if t and not re.match(r"[a-z]+:", t)]  # not http:, mailto:


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_stays_inside_the_repository(page: Path) -> None:
    for target in _relative_targets(page):
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: {target} does not exist in the repository"


def test_no_page_points_into_the_shared_folder_of_a_workspace() -> None:
    for page in PAGES:
        assert "../shared" not in page.read_text(), page.name
