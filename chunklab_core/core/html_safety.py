"""Text that reaches an HTML page shown as text, and pages that cannot run what they show.

Every page the project writes (the website of ``reports.website``; the own-documents report)
shows strings that come from data: file names, headings, gold snippets, questions, model
answers. Handles:

* :func:`text` / :func:`attr`: ``html.escape`` for element text and for a quoted attribute
  value (quotes escaped too); :func:`url`: a relative file name as a link target
  (percent-encoded, then attribute-escaped), so ``a"b<c>.html`` stays one harmless link.
* :func:`escape_markdown_html`: Markdown built from data (what ``reports.markdown.md`` shows)
  with its raw HTML made literal -- ``<`` escaped outside code spans and fenced code blocks,
  which Markdown already shows literally, and ``&`` unless it starts a character reference
  (``&lt;`` written by a post that escaped already stays one); ``>`` opens no tag and stays, so
  block quotes still work -- so ``<img src=x onerror=...>`` in a
  model's answer is displayed, not rendered, while emphasis, lists and tables still render.
* :func:`strip_active_content`: a whole rendered page body (nbconvert's output) with everything
  that can run removed, as a second line of defence: ``script``, ``iframe``, ``object``,
  ``embed``, ``form`` and similar elements, every ``on*`` event attribute, and ``javascript:``,
  ``vbscript:`` and non-image ``data:`` URLs. Ordinary markup (headings, tables, images that are
  files, pandas' scoped styles) is kept.

Not handled: a full HTML sanitiser policy (a CSS parser; ``style`` elements are kept, since
browsers no longer run script from CSS), escaping for JavaScript or CSS contexts (no page
writes data there).
"""

from __future__ import annotations

import html
import re
import urllib.parse

ACTIVE_ELEMENTS = ("script", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "input",
                   "button", "textarea", "select", "base", "meta", "link", "noscript", "template", "portal")
URL_ATTRIBUTES = ("href", "src", "action", "formaction", "xlink:href", "srcset", "poster", "background",
                  "data", "codebase")
_SAFE_DATA_URL = re.compile(r"data:image/(png|jpeg|gif|webp);base64,", re.I)
_BARE_AMPERSAND = re.compile(r"&(?!#[0-9]+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)")
_CODE = re.compile(r"(^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\2[ \t]*$|(`+)(?!`).+?(?<!`)\3(?!`))", re.S | re.M)


def text(value: object) -> str:
    """``value`` as element text: ``&``, ``<``, ``>`` and quotes escaped."""
    return html.escape(str(value), quote=True)


def attr(value: object) -> str:
    """``value`` for a double-quoted attribute (the same escaping; named for the place it goes)."""
    return html.escape(str(value), quote=True)


def url(relative: str) -> str:
    """A relative file name as an ``href``/``src`` value: percent-encoded, then attribute-escaped."""
    return attr(urllib.parse.quote(relative, safe="/"))


def escape_markdown_html(markdown: str) -> str:
    """``markdown`` with raw HTML made literal outside code spans and fenced code blocks."""
    def literal(part: str) -> str:
        part = _BARE_AMPERSAND.sub("&amp;", part)
        return part.replace("<", "&lt;")

    pieces, last = [], 0
    for match in _CODE.finditer(markdown):
        pieces.append(literal(markdown[last:match.start()]))
        pieces.append(match.group(0))
        last = match.end()
    pieces.append(literal(markdown[last:]))
    return "".join(pieces)


def _unsafe_url(value: str) -> bool:
    compact = re.sub(r"[\x00-\x20]+", "", html.unescape(value)).lower()
    if compact.startswith(("javascript:", "vbscript:")):
        return True
    return compact.startswith("data:") and not _SAFE_DATA_URL.match(compact)


def strip_active_content(body: str) -> str:
    """``body`` (an HTML fragment or page) without elements, attributes and URLs that can run code."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser")
    for element in soup.find_all(ACTIVE_ELEMENTS):
        element.decompose()
    for element in soup.find_all(True):
        for name in list(element.attrs):
            value = element.attrs[name]
            value = " ".join(value) if isinstance(value, list) else str(value)
            if name.lower().startswith("on") or (name.lower() in URL_ATTRIBUTES and _unsafe_url(value)):
                del element.attrs[name]
    return str(soup)
