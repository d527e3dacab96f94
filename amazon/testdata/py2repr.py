"""Writes py2repr_meta.txt, 2014-style meta lines exactly as Python 2's
`print dict` wrote them, and py2repr_want.jsonl, the values each line must
parse to. Python 3's repr of bytes is Python 2's repr of str, and
'u' + ascii(s) is Python 2's repr of unicode.

Regenerate from the amazon directory with:  python3 testdata/py2repr.py
"""
import html
import json
import random

rng = random.Random(1)
PIECES = ["a", "Z", " ", "'", '"', "\\", "\n", "\t", "\r", "\x00", "\x1f", "\x7f",
          "\xe9", "\xa0", "\xff", "\u2013", "\u2019", "\u4e2d", "\U0001F600",
          "&amp;", "&quot;", "&#x92;", "&#146;", "&eacute;", "&nbsp;", "&B;", " & ",
          "Men's", "Levi's 505", "Caf\xe9"]


def text():
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 12)))


def value(s):
    """(literal, decoded) for s written as a Python 2 str or unicode."""
    kind = rng.randrange(4)
    if kind == 0:  # unicode object
        return "u" + ascii(s), s
    if kind == 1 and all(ord(c) < 256 for c in s):  # Latin-1 bytes
        b = s.encode("latin-1")
    elif kind == 2:  # arbitrary bytes
        b = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 8)))
    else:  # UTF-8 bytes
        b = s.encode("utf-8")
    try:
        decoded = b.decode("utf-8")
    except UnicodeDecodeError:
        decoded = b.decode("latin-1")
    return repr(b)[1:], decoded


def asin():
    if rng.randrange(5) == 0:
        return "".join(rng.choice("0123456789") for _ in range(9)) + rng.choice("0123456789X")
    return "B0" + "".join(rng.choice("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(8))


def asins():
    return [asin() for _ in range(rng.randrange(0, 6))]


def strlist(items):
    return "[" + ", ".join(repr(x) for x in items) + "]"


with open("testdata/py2repr_meta.txt", "w", newline="\n") as lit, \
        open("testdata/py2repr_want.jsonl", "w", newline="\n") as want:
    for _ in range(200):
        a = asin()
        w = {"asin": a, "title": "", "brand": "", "imUrl": "", "price": None,
             "salesRank": [], "categories": [], "also_bought": [],
             "also_viewed": [], "bought_together": []}
        fields = ["'asin': " + repr(a)]
        for key in ("title", "brand"):
            if rng.randrange(4):
                lit_s, dec = value(text())
                fields.append("'%s': %s" % (key, lit_s))
                w[key] = html.unescape(dec)
        if rng.randrange(3):
            p = rng.choice([rng.randrange(1, 500), round(rng.uniform(0.5, 900), 2), 1e16, 0.1])
            fields.append("'price': " + repr(p))
            w["price"] = float(p)
        if rng.randrange(2):
            u = "http://ecx.images-amazon.com/images/I/%s.jpg" % asin()
            fields.append("'imUrl': " + repr(u))
            w["imUrl"] = u
        if rng.randrange(2):
            ranks = []
            for _ in range(rng.randrange(0, 3)):
                lit_s, dec = value(rng.choice(["Clothing", "Toys &amp; Games", "Arts, Crafts &amp; Sewing"]))
                n = rng.randrange(1, 3000000)
                ranks.append((lit_s, html.unescape(dec), n, rng.randrange(4) == 0))
            fields.append("'salesRank': {" + ", ".join(
                "%s: %d%s" % (l, n, "L" if long_ else "") for l, _, n, long_ in ranks) + "}")
            w["salesRank"] = [[d, n] for _, d, n, _ in ranks]
        if rng.randrange(4):
            paths = []
            for _ in range(rng.randrange(0, 4)):
                paths.append([value(rng.choice(["Clothing, Shoes &amp; Jewelry", "Men", "Women", "Novelty &amp; More", text()]))
                              for _ in range(rng.randrange(0, 4))])
            fields.append("'categories': [" + ", ".join(
                "[" + ", ".join(l for l, _ in path) + "]" for path in paths) + "]")
            w["categories"] = [[html.unescape(d) for _, d in path] for path in paths]
        if rng.randrange(4):
            rel = {}
            for key in rng.sample(["also_bought", "also_viewed", "bought_together", "buy_after_viewing"], rng.randrange(0, 5)):
                rel[key] = asins()
                if key != "buy_after_viewing":
                    w[key] = rel[key]
            fields.append("'related': {" + ", ".join("%r: %s" % (k, strlist(v)) for k, v in rel.items()) + "}")
        if rng.randrange(2):
            fields.append("'description': " + value(text() * 3)[0])
        rng.shuffle(fields)
        lit.write("{" + ", ".join(fields) + "}\n")
        want.write(json.dumps(w, ensure_ascii=False, sort_keys=True) + "\n")
