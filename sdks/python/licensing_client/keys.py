"""Licence keys as the user typed them: native keys with their check characters, and foreign keys.

The one reading every port is held to is the gateway's (proto/rules/license-key.ts,
``parseLicenseKey``): at most 64 characters; white space around is trimmed, case and hyphens are set
aside and the look-alikes O, I and L read as 0, 1 and 1; 30 characters of the Crockford alphabet are a
**native** key, well formed when its two check characters match (so a typo is refused with no
request); anything else of 8 to 64 characters of ``A-Z a-z 0-9 . _ ~ + = : -`` is a **foreign** key
(imported from another system), taken exactly as it is once trimmed.

JavaScript and Python differ on text outside ASCII, and the reference is JavaScript: ``trim()``
strips U+FEFF but not U+001C-U+001F or U+0085 (``str.strip()`` the other way round), lengths count
UTF-16 code units, and ``re``'s ``$`` and ``\\d`` accept a final newline and non-ASCII digits. Each is
handled here as JavaScript does it. Upper-casing agrees (``"ß".upper()`` is ``"SS"`` in both).
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from .encoding import js_trim

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: The longest text read as a key at all (a native key is 35 characters with its hyphens).
MAX_KEY_LENGTH = 64
_RANDOM_CHARS = 28
_KEY_CHARS = 30
_MODULUS = 1021
_GROUP = 5
_VALUE = {c: i for i, c in enumerate(ALPHABET)}
# Crockford's aliases: letters people confuse with digits.
_ALIASES = str.maketrans({"O": "0", "I": "1", "L": "1"})
_FOREIGN = re.compile(r"[A-Za-z0-9._~+=:-]{8,64}")


class KeyCheck(NamedTuple):
    """What check_key() found. ``normalized`` is the key to send and store (None when not well
    formed); ``kind`` is ``native`` or ``foreign``; ``reason`` is ``format`` or ``checksum`` when not
    well formed."""

    well_formed: bool
    normalized: Optional[str]
    kind: Optional[str]
    reason: Optional[str]


def _check_value(chars: str) -> str:
    total = sum((i + 1) * _VALUE[c] for i, c in enumerate(chars)) % _MODULUS
    return ALPHABET[total // 32] + ALPHABET[total % 32]


def _group(chars: str) -> str:
    return "-".join(chars[i : i + _GROUP] for i in range(0, len(chars), _GROUP))


def _js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units, two for a character beyond U+FFFF."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


_FORMAT = KeyCheck(False, None, None, "format")
_CHECKSUM = KeyCheck(False, None, None, "checksum")


def _native(text: str) -> KeyCheck:
    if _js_length(text) > MAX_KEY_LENGTH:
        return _FORMAT
    chars = js_trim(text).upper().replace("-", "").translate(_ALIASES)
    if len(chars) != _KEY_CHARS or any(c not in _VALUE for c in chars):
        return _FORMAT
    if _check_value(chars[:_RANDOM_CHARS]) != chars[_RANDOM_CHARS:]:
        return _CHECKSUM
    return KeyCheck(True, _group(chars), "native", None)


def check_key(input: str) -> KeyCheck:  # noqa: A002 - the name the other ports give it
    """Reads a licence key as typed, without a request.

    >>> check_key(" 7k3qf-9xw2m-t0rbh-pz4dn-c8e1v-q3atg ")
    KeyCheck(well_formed=True, normalized='7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG', kind='native', reason=None)
    >>> check_key("7K3ZF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG").reason
    'checksum'
    """
    text = input
    if not isinstance(text, str):
        raise TypeError("a licence key is text, got %s" % type(text).__name__)
    native = _native(text)
    if native.well_formed or native.reason == "checksum" or _js_length(text) > MAX_KEY_LENGTH:
        return native
    # Not native-shaped: a key imported from another system is matched by its exact text, so no
    # check-character shortcut may refuse it.
    trimmed = js_trim(text)
    if _FOREIGN.fullmatch(trimmed):
        return KeyCheck(True, trimmed, "foreign", None)
    return native


def canonical_key(text: str) -> str:
    """The key as the server compares it: a native key in its grouped form, any other trimmed."""
    check = check_key(text)
    return check.normalized if check.well_formed and check.normalized else js_trim(text)
