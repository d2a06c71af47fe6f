"""A one-page document as a list of blocks, rendered to Markdown and to a simple self-contained-layout HTML page."""
from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Table:
    header: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True)
class Image:
    path: str  # relative to the document
    caption: str
    alt: str = "figure"


@dataclass(frozen=True)
class Bullets:
    items: Sequence[str]


Block = Union[Heading, Paragraph, Table, Image, Bullets]

_CSS = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;font-size:0.9em}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}"
        "th{background:#eee}td:first-child,th:first-child{text-align:left}img{max-width:100%;border:1px solid #ddd}"
        "figure{margin:1em 0}figcaption{font-size:0.85em;color:#555}")


def to_markdown(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Paragraph):
            out.append(block.text)
        elif isinstance(block, Table):
            out.append("| " + " | ".join(block.header) + " |")
            out.append("|" + "|".join("---" for _ in block.header) + "|")
            out += ["| " + " | ".join(row) + " |" for row in block.rows]
        elif isinstance(block, Image):
            out.append(f"![{block.alt}]({block.path})\n\n*{block.caption}*")
        elif isinstance(block, Bullets):
            out += [f"- {item}" for item in block.items]
        out.append("")
    return "\n".join(out)


def to_html(blocks: Sequence[Block], title: str) -> str:
    e = html.escape
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{_CSS}</style>"
           "</head><body>"]
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"<h{block.level}>{e(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            out.append(f"<p>{e(block.text)}</p>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{e(h)}</th>" for h in block.header)
            body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif isinstance(block, Image):
            out.append(f"<figure><img src='{e(block.path)}' alt='{e(block.alt)}'>"
                       f"<figcaption>{e(block.caption)}</figcaption></figure>")
        elif isinstance(block, Bullets):
            out.append("<ul>" + "".join(f"<li>{e(item)}</li>" for item in block.items) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out)


def write_documents(blocks: Sequence[Block], directory: Path, title: str, stem: str = "summary") -> tuple[Path, Path]:
    markdown, page = directory / f"{stem}.md", directory / f"{stem}.html"
    markdown.write_text(to_markdown(blocks))
    page.write_text(to_html(blocks, title))
    return markdown, page
