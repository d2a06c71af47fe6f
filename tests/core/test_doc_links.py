"""Every relative link and image of the README, docs/ and results/ points to a file or folder that exists (issue 62:
results and their figures moved into question folders; a move that leaves a link behind fails here)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"```.*?```", re.S)  # fenced blocks hold commands and code, not links


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "results").rglob("*.md"))]


def relative_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(FENCE.sub("", page.read_text()))
            if not re.match(r"^[a-z]+:", target) and not target.startswith("#")]


def test_the_scan_finds_links() -> None:
    """A scan that matched nothing would pass trivially."""
    assert sum(len(relative_links(page)) for page in pages()) > 50


def test_every_relative_link_resolves() -> None:
    broken = [f"{page.relative_to(ROOT)}: {target}" for page in pages() for target in relative_links(page)
              if not (page.parent / target.split("#")[0]).exists()]
    assert not broken, "links to nothing:\n" + "\n".join(broken)
