"""Licence keys beyond the vectors: where Python's text handling differs from JavaScript's."""

import unittest

from licensing_client import check_key
from licensing_client.keys import ALPHABET, _check_value, _group, canonical_key

KEY = "7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG"


def native_key(body: str) -> str:
    return _group(body + _check_value(body))


class NativeKeys(unittest.TestCase):
    def test_check_characters_catch_every_single_typo(self) -> None:
        plain = KEY.replace("-", "")
        for i in range(30):
            for c in ALPHABET:
                if c == plain[i]:
                    continue
                typo = plain[:i] + c + plain[i + 1 :]
                self.assertEqual(check_key(typo).reason, "checksum", typo)

    def test_aliases_and_case(self) -> None:
        key = native_key("10Z10ABCDEFGHJKMNPQRSTVWXY01")
        self.assertEqual(check_key(key.replace("0", "o").replace("1", "l").lower()).normalized, key)
        self.assertEqual(check_key(key.replace("1", "I")).normalized, key)

    def test_unicode_upper_casing_as_javascript(self) -> None:
        # "ß".toUpperCase() is "SS" in JavaScript, and "ı" (dotless i) is "I", read as 1: the same here.
        key = native_key("SS" + "0123456789ABCDEFGHJKMNPQ1R")
        self.assertEqual(check_key(key.replace("SS", "ß", 1)).normalized, key)
        self.assertEqual(check_key(key.replace("1", "ı", 1)).normalized, key)
        ligature = native_key("ST" + "0123456789ABCDEFGHJKMNPQ1R")
        self.assertEqual(check_key(ligature.replace("ST", "\ufb06", 1)).normalized, ligature)
        self.assertEqual(check_key(key.replace("S", "é", 1)).reason, "format")

    def test_white_space_is_javascript_s(self) -> None:
        # trim() strips U+FEFF and U+3000 but not U+0085 or U+001C, which str.strip() would strip.
        self.assertEqual(check_key("\ufeff\u3000" + KEY + "\u2029").normalized, KEY)
        self.assertEqual(check_key("\x85" + KEY).reason, "format")
        self.assertEqual(check_key(KEY + "\x1c").reason, "format")
        self.assertEqual(check_key(KEY + "\n").normalized, KEY)

    def test_space_inside_is_not_a_native_key(self) -> None:
        self.assertEqual(check_key(KEY.replace("-", " ")).reason, "format")


class ForeignKeys(unittest.TestCase):
    def test_taken_exactly_as_given(self) -> None:
        self.assertEqual(check_key("abcDEF12").kind, "foreign")
        self.assertEqual(check_key("  abc.DEF_12~+=:-  ").normalized, "abc.DEF_12~+=:-")
        self.assertEqual(check_key("-leading-hyphen").normalized, "-leading-hyphen")

    def test_lengths(self) -> None:
        self.assertEqual(check_key("a" * 7).reason, "format")
        self.assertEqual(check_key("a" * 8).kind, "foreign")
        self.assertEqual(check_key("a" * 64).kind, "foreign")
        self.assertEqual(check_key("a" * 65).reason, "format")
        # More than 64 before trimming is refused, as the gateway refuses it.
        self.assertEqual(check_key(" " + "a" * 64).reason, "format")

    def test_lengths_count_utf16_code_units(self) -> None:
        # 32 characters beyond U+FFFF are 64 UTF-16 code units in JavaScript; 33 are 66.
        self.assertEqual(check_key("\U0001f600" * 33).reason, "format")

    def test_ascii_only(self) -> None:
        # Python's \d and str.isalnum() take other scripts' digits; the key format does not.
        self.assertEqual(check_key("١٢٣٤٥٦٧٨٩").reason, "format")
        self.assertEqual(check_key("abcdefgh\u00e9").reason, "format")

    def test_no_trailing_newline_shortcut(self) -> None:
        # re's "$" would accept a final newline; the key is trimmed of it, then matched whole.
        self.assertEqual(check_key("abcdefgh\n").normalized, "abcdefgh")
        self.assertEqual(check_key("abcdefgh\nx").reason, "format")

    def test_a_native_shaped_key_with_a_typo_is_never_foreign(self) -> None:
        self.assertEqual(check_key(KEY[:-1] + "Z").reason, "checksum")


class Misc(unittest.TestCase):
    def test_not_text(self) -> None:
        with self.assertRaises(TypeError):
            check_key(None)  # type: ignore[arg-type]

    def test_canonical_key(self) -> None:
        self.assertEqual(canonical_key(KEY.lower()), KEY)
        self.assertEqual(canonical_key(" foreign-KEY-1 "), "foreign-KEY-1")


if __name__ == "__main__":
    unittest.main()
