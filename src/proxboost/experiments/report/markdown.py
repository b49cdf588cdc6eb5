"""The Markdown the report renders (the subset SUMMARY.md and docs/claims.md use), as HTML.

Headings, pipe tables, ``- `` lists, paragraphs and inline code, bold and emphasis: what
:mod:`proxboost.experiments.report.summary` writes. Anything else stays plain text, escaped. A
table too wide for a page is transposed when that makes it narrower."""

from __future__ import annotations

import re

__all__ = ["inline", "markdown_html", "subsections", "summary_sections", "table_cells"]

#: A Markdown table with more columns than this, and fewer rows than columns, is shown transposed:
#: a 23-column table does not fit a page, its 10 rows as columns do.
MAX_COLUMNS = 12

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_EM = re.compile(r"(?<![\w*\\])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")


def inline(text) -> str:
    """Inline Markdown of ``text`` as HTML: code spans, bold, emphasis; everything else escaped."""
    from markupsafe import escape

    out = []
    for i, part in enumerate(_CODE.split(str(text))):
        s = str(escape(part))
        if i % 2:  # inside a code span: no emphasis
            out.append(f"<code>{s}</code>")
        else:
            out.append(_EM.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", s)))
    return "".join(out)


def table_cells(line: str) -> list[str]:
    """The cells of one pipe-table row, stripped, with ``\\|`` read as a literal bar."""
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line.strip()[1:-1])]


def _transposed(head: list[str], body: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """``head`` and ``body`` with rows and columns swapped when the table is too wide for a page
    (:data:`MAX_COLUMNS`) and has fewer rows than columns; as they are otherwise."""
    rows = [head, *body]
    if len(head) <= MAX_COLUMNS or len(rows) >= len(head) or {len(r) for r in rows} != {len(head)}:
        return head, body
    swapped = [list(col) for col in zip(*rows)]
    return swapped[0], swapped[1:]


def _table(lines: list[str]) -> str:
    has_head = len(lines) > 1 and _RULE.match(lines[1])
    head = table_cells(lines[0]) if has_head else []
    body = [table_cells(line) for line in (lines[2:] if has_head else lines)]
    if head:
        head, body = _transposed(head, body)
    html = ['<div class="table-wrap"><table>']
    if head:
        cells = "".join(f"<th>{inline(c)}</th>" for c in head)
        html.append(f"<thead><tr>{cells}</tr></thead>")
    html.append("<tbody>")
    for row in body:
        html.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>")
    html.append("</tbody></table></div>")
    return "\n".join(html)


def _block_end(line: str) -> bool:
    return not line.strip() or line.startswith(("#", "|", "- "))


def markdown_html(text: str, heading_offset: int = 0) -> str:
    """HTML of Markdown ``text``: headings (shifted by ``heading_offset`` levels), pipe tables, ``-
    `` lists, paragraphs (one wholly in ``_…_`` is emphasised) and the inline marks of
    :func:`inline`. The subset :mod:`proxboost.experiments.report.summary` writes; anything else
    stays plain text."""
    lines, html, i = text.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            h = min(6, level + heading_offset)
            html.append(f"<h{h}>{inline(line[level:].strip())}</h{h}>")
            i += 1
        elif line.startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            html.append(_table(lines[i:j]))
            i = j
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith(("- ", "  ")) and lines[i].strip():
                if lines[i].startswith("- "):
                    items.append(lines[i][2:].strip())
                else:  # an indented continuation of the item above
                    items[-1] += " " + lines[i].strip()
                i += 1
            html.append("<ul>" + "".join(f"<li>{inline(t)}</li>" for t in items) + "</ul>")
        else:
            j = i + 1
            while j < len(lines) and not _block_end(lines[j]):
                j += 1
            para = " ".join(s.strip() for s in lines[i:j])
            if len(para) > 2 and para.startswith("_") and para.endswith("_"):
                html.append(f"<p><em>{inline(para[1:-1])}</em></p>")
            else:
                html.append(f"<p>{inline(para)}</p>")
            i = j
    return "\n".join(html)


def summary_sections(text: str) -> list[tuple[str, str]]:
    """(title, Markdown body) of each ``## `` section of SUMMARY.md, in order (the text before the
    first one is left out: it is the title and the code versions, rebuilt here from the rows)."""
    parts = re.split(r"^## (.*)$", text, flags=re.M)
    return [(parts[k].strip(), parts[k + 1].strip("\n")) for k in range(1, len(parts), 2)]


def subsections(body: str) -> tuple[str, list[tuple[str, str]]]:
    """``body`` split at its ``### `` headings: (text before them, [(title, Markdown body)])."""
    parts = re.split(r"^### (.*)$", body, flags=re.M)
    return parts[0].strip("\n"), [
        (parts[k].strip(), parts[k + 1].strip("\n")) for k in range(1, len(parts), 2)
    ]
