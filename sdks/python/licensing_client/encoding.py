"""Bytes from text exactly as the TypeScript SDK reads them (packages/client/src/encoding.ts).

Python's own readers are more forgiving in places (``base64.b64decode`` skips characters outside
the alphabet, ``str.strip`` and ``re``'s ``\\s`` know other white space than JavaScript), and a
port must refuse what the reference refuses, so these are written out by hand.
"""

from __future__ import annotations

import base64
import re

#: What JavaScript's ``String.prototype.trim`` and ``\\s`` treat as white space (WhiteSpace and
#: LineTerminator). Python's ``str.isspace`` adds U+001C-U+001F and U+0085 and lacks U+FEFF.
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_JS_SPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*")
_TRAILING_PADDING = re.compile(r"=+\Z")


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript does it."""
    return text.strip(JS_WHITESPACE)


def base64_to_bytes(text: str) -> bytes:
    """Standard or URL-safe base64, padded or not. Raises ValueError on anything else
    (white space, characters outside the alphabet, padding inside, an impossible length)."""
    if not isinstance(text, str):
        raise ValueError("not valid base64")
    standard = _TRAILING_PADDING.sub("", text.replace("-", "+").replace("_", "/"))
    if not _BASE64.fullmatch(standard) or len(standard) % 4 == 1:
        raise ValueError("not valid base64")
    return base64.b64decode(standard + "=" * ((4 - len(standard) % 4) % 4))


def pem_to_der(pem: str, label: str = "PUBLIC KEY") -> bytes:
    """The DER bytes inside the first PEM block with this label (white space inside is ignored)."""
    match = re.search(
        "-----BEGIN " + re.escape(label) + "-----(.+?)-----END " + re.escape(label) + "-----",
        pem,
        re.DOTALL,
    )
    if not match:
        raise ValueError('not a PEM "%s" block' % label)
    return base64_to_bytes(_JS_SPACE_RUN.sub("", match.group(1)))
