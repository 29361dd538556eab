"""The site's one style sheet: its name beside the pages, its source, and writing it there.

Handles: ``site.css`` (beside this module), which every page of the website links by the
relative name :data:`STYLE_FILE` — the posts and the index (``reports.website``) and the lab
(``reports.lab``, whose rules are the sheet's last section, scoped to ``<body class="lab">``);
:func:`write_style` copies it into a folder of pages. Both writers call it, so the lab written
alone (``lab.write_lab`` into any folder) is styled as it is on the site.

Not handled: the rules themselves (they are CSS, in ``site.css``), inline styles (no page has
any), a second sheet (there is one).
"""

from __future__ import annotations

import shutil
from pathlib import Path

STYLE_FILE = "site.css"  # linked relatively by every page, written beside them
STYLE_SOURCE = Path(__file__).with_name(STYLE_FILE)


def write_style(folder: Path) -> Path:
    """Copy the site's style sheet into ``folder`` (as :data:`STYLE_FILE`); return its path."""
    target = Path(folder) / STYLE_FILE
    shutil.copyfile(STYLE_SOURCE, target)
    return target
