"""Compare what two executed posts show, cell boundaries and execution metadata ignored.

For a refactor of a notebook source: execute it, then compare with the committed post, e.g.
``git show HEAD:notebooks/04_questions.ipynb > /tmp/old.ipynb`` and this script on both.

Usage: python scripts/compare_post_outputs.py OLD.ipynb NEW.ipynb  -> prints the differing outputs; exit 1 if any.
Every output becomes (kind, text): stream text by stream name, and for display_data/execute_result
every MIME type (images as sha256 of their base64). Output type (display vs execute_result) is ignored.
"""
import difflib
import hashlib
import json
import sys

def flat(path):
    """Every output of every code cell in order, as (kind, text)."""
    nb = json.load(open(path))
    items = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        for o in c.get("outputs", []):
            if o["output_type"] == "stream":
                items.append((f"stream:{o['name']}", "".join(o["text"])))
            elif o["output_type"] in ("display_data", "execute_result"):
                for mime, data in sorted(o["data"].items()):
                    text = "".join(data) if isinstance(data, list) else (data if isinstance(data, str) else json.dumps(data))
                    if mime.startswith("image/"):
                        text = hashlib.sha256(text.encode()).hexdigest()
                    items.append((mime, text))
            else:
                items.append((o["output_type"], json.dumps(o)))
    return items

if len(sys.argv) != 3:
    sys.exit(__doc__)
old, new = flat(sys.argv[1]), flat(sys.argv[2])
bad = 0
sm = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
for tag, i1, i2, j1, j2 in sm.get_opcodes():
    if tag == "equal":
        continue
    bad += 1
    print(f"--- {tag}: old[{i1}:{i2}] new[{j1}:{j2}]")
    for k, t in old[i1:i2]:
        print("  OLD", k, t[:600].replace("\n", "\n      "))
    for k, t in new[j1:j2]:
        print("  NEW", k, t[:600].replace("\n", "\n      "))
print(f"{len(old)} old outputs, {len(new)} new outputs, {bad} differing blocks")
sys.exit(1 if bad else 0)
