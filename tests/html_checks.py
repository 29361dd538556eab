"""Reusable checks that a page shows hostile strings as text (issue 30): no live markup.

Use from any test of a page the project writes (the website, the own-documents report)::

    from tests.html_checks import HOSTILE, assert_shown_as_text  # or: from html_checks import ...
    page = build_page_with(HOSTILE)            # put every hostile string where data goes
    assert_shown_as_text(page, HOSTILE)

:func:`assert_no_live_markup` fails when a page holds anything a hostile string could have
made live: a ``script`` element, an event attribute (``onerror``...), a ``javascript:`` link,
an ``img`` whose source is the hostile ``x``, or a heading holding the hostile marker.
:func:`assert_shown_as_text` also requires each hostile string to appear, whole, in the
page's visible text, and never raw in its source when it holds ``<``, ``>`` or ``&`` (escaped
as ``&lt;``, ``&gt;``, ``&amp;``).
"""

from __future__ import annotations

from bs4 import BeautifulSoup

MARKER = "HOSTILE-7f3a"
HOSTILE = (
    "<img src=x onerror=alert(1)>",
    f"<h1>{MARKER}</h1>",
    "Tom & Jerry's \"quoted\" text",
    "</td></tr></table><script>alert(2)</script>",
    "<a href=\"javascript:alert(3)\">click</a>",
)


def assert_no_live_markup(page: str) -> None:
    """Fail when ``page`` holds markup a hostile string could have made live."""
    soup = BeautifulSoup(page, "html.parser")
    assert not soup.find_all("script"), "a <script> element on the page"
    for element in soup.find_all(True):
        handlers = [name for name in element.attrs if name.lower().startswith("on")]
        assert not handlers, f"event attribute(s) {handlers} on <{element.name}>"
        for name in ("href", "src"):
            value = str(element.get(name, "")).strip().lower()
            assert not value.startswith("javascript:"), f"a javascript: {name} on <{element.name}>"
        assert not (element.name == "img" and element.get("src") == "x"), "the hostile <img src=x> is live"
        if element.name in ("h1", "h2", "h3", "h4", "h5", "h6"):
            assert MARKER not in element.get_text(), f"the hostile heading is a live <{element.name}>"


def assert_shown_as_text(page: str, hostile: tuple[str, ...] = HOSTILE) -> None:
    """No live markup, and every string of ``hostile`` is visible, whole, as text."""
    assert_no_live_markup(page)
    visible = " ".join(BeautifulSoup(page, "html.parser").get_text().split())
    for string in hostile:
        assert " ".join(string.split()) in visible, f"{string!r} is not shown as text"
        if any(c in string for c in "<>&"):
            assert string not in page, f"{string!r} is in the page source unescaped"
