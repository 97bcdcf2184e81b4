#!/usr/bin/env python3
"""A minimal licensed Python app: checks its licence at start-up and says what it found.

Online first: the licence is validated by the server with the licence key alone (no API key ships in
the app); a licence that needs this machine activated is activated, and a fresh signed licence file
is kept for later. When the server gives no answer (no network, timeout, 429, 5xx), the kept file is
verified offline with the product's public keys. A definite "no" from the server is final.

    LICENSING_BASE_URL=https://licensing.example.com LICENSE_KEY=7K3QF-… \\
    PUBLIC_KEYS=public-keys.json python3 examples/python-app/app.py

Exit status: 0 when the app may run, 1 when not, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

try:
    import licensing_client  # noqa: F401  (installed: pip install ./sdks/python)
except ImportError:
    # Run from a checkout without installing: the package is in sdks/python.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sdks" / "python"))

from licensing_client import LicensedApp, LicensingError, check_key

DEFAULT_FILE = Path.home() / ".licensing-example" / "license-file.json"


def arguments(argv: Optional[List[str]] = None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        description="Check this app's licence at start-up: online, else with the licence file kept last time.",
        epilog="Every option can come from the environment variable named in its help.",
    )
    parser.add_argument("--base-url", default=env("LICENSING_BASE_URL"), help="the licensing server (LICENSING_BASE_URL)")
    parser.add_argument("--license-key", default=env("LICENSE_KEY"), help="the customer's licence key (LICENSE_KEY)")
    parser.add_argument("--product-id", default=env("PRODUCT_ID"), help="refuse keys of other products (PRODUCT_ID)")
    parser.add_argument(
        "--public-keys",
        default=env("PUBLIC_KEYS"),
        help="the product's public signing keys as GET /api/v1/products/{id}/signing-keys answers them, "
        "shipped with the app, for the offline check (PUBLIC_KEYS)",
    )
    parser.add_argument(
        "--license-file",
        default=env("LICENSE_FILE", str(DEFAULT_FILE)),
        help="where the signed licence file is kept for starts without network (LICENSE_FILE; default %(default)s)",
    )
    parser.add_argument(
        "--require",
        action="append",
        default=[f for f in (env("REQUIRED_FEATURES") or "").split(",") if f],
        help="a feature (entitlement code) the app cannot run without; repeatable (REQUIRED_FEATURES, comma-separated)",
    )
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per request: a user is waiting (default 5)")
    return parser.parse_args(argv)


def read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def keep_file(path: str, file: Dict[str, Any]) -> None:
    """Writes the licence file atomically, readable by this user only."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=str(target.parent), prefix=".license-file-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(file, f)
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def no_answer(err: LicensingError) -> bool:
    """The server could not give a verdict: unreachable, timed out, overloaded or down."""
    return err.status == 0 or err.status == 429 or err.status >= 500


def online(app: LicensedApp, args: argparse.Namespace) -> int:
    answer = app.validate(entitlements=args.require)
    seat = None
    if answer.get("next_action") == "activate":
        # This machine has no seat yet (or its floating seat lapsed): take one and ask again.
        seat = app.activate()
        answer = app.validate(entitlements=args.require)
    try:
        if not answer.get("valid"):
            print("Licence refused by the server: %s: %s" % (answer.get("code"), answer.get("detail")))
            if answer.get("next_action") not in (None, "none"):
                print("What to do: %s" % answer["next_action"])
            return 1
        features = answer.get("entitlements") or []
        print("Licence OK (from the server): %s." % answer.get("code"))
        print("Features: %s." % (", ".join(features) or "none"))
        try:
            keep_file(args.license_file, app.license_file(ttl_days=7))
            print("Licence file kept for offline starts: %s" % args.license_file)
        except (LicensingError, OSError) as err:
            # No reason to refuse: the file kept before, if any, stays.
            print("No new licence file (%s)." % err)
        return 0
    finally:
        if seat is not None and seat.get("lease_expires_at"):
            # A floating seat is for while the app runs; this one is done.
            try:
                app.deactivate()
            except LicensingError:
                pass  # it lapses by itself at the end of its lease


def offline(app: LicensedApp, args: argparse.Namespace, why: LicensingError) -> int:
    print("No answer from the server (%s): checking the licence file." % why)
    if app.public_keys is None:
        print("No public keys to check it with (--public-keys / PUBLIC_KEYS): cannot start offline.")
        return 1
    try:
        file = read_json(args.license_file)
    except (OSError, ValueError) as err:
        print("No usable licence file at %s (%s): cannot start offline." % (args.license_file, err))
        return 1
    result = app.verify_offline(file)
    if not result.valid:
        print("Licence file refused: %s." % result.code)
        return 1
    features = result.payload.get("entitlements") or []
    missing = [f for f in args.require if f not in features]
    if missing:
        print("Licence file lacks: %s." % ", ".join(missing))
        return 1
    print("Licence OK (from the licence file, valid until %s)." % result.payload.get("valid_until"))
    print("Features: %s." % (", ".join(features) or "none"))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = arguments(argv)
    if not args.license_key:
        print("Give the licence key: --license-key or LICENSE_KEY.", file=sys.stderr)
        return 2
    key = check_key(args.license_key)
    if not key.well_formed:
        # A typo is caught here, with no request.
        why = "a character is mistyped" if key.reason == "checksum" else "it is not a licence key"
        print("That licence key cannot be right: %s." % why)
        return 1
    try:
        public_keys = read_json(args.public_keys) if args.public_keys else None
    except (OSError, ValueError) as err:
        print("Cannot read the public keys %s: %s" % (args.public_keys, err), file=sys.stderr)
        return 2
    app = LicensedApp(
        args.base_url or "http://localhost",
        key.normalized,
        product_id=args.product_id,
        public_keys=public_keys,
        timeout=args.timeout,
        max_retries=1,
    )
    if not args.base_url:
        return offline(app, args, LicensingError(0, "network_error", "no LICENSING_BASE_URL given"))
    try:
        return online(app, args)
    except LicensingError as err:
        if no_answer(err):
            return offline(app, args, err)
        print("Refused by the server: %s" % err)
        if err.next_action:
            print("What to do: %s" % err.next_action)
        return 1


if __name__ == "__main__":
    sys.exit(main())
