"""The conformance command of the Python library (docs/sdk-conformance.md):
``python3 -m licensing_client.conformance COMMAND [options]``, or ``sdks/conformance python …``.

Prints one JSON object on one line. Exit status: 0 when the answer is valid or the call succeeded,
1 when not (a refusal of the API prints ``{"error": {status, code, detail, next_action}}``), 2 on a
usage error, whose message goes to stderr with nothing on stdout. Options are read as the TypeScript
command reads them (``--name value``; every word not starting with ``--`` is an argument, so a key
may start with a hyphen), not with argparse, whose prefix matching and dash handling differ.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .api import LicenseApi
from .app import LicensedApp
from .errors import LicensingError
from .keys import check_key
from .license_file import verify_license_file
from .transport import Transport
from .webhooks import verify_webhook

USAGE = """usage: python3 -m licensing_client.conformance COMMAND [options]   (docs/sdk-conformance.md)
  verify-file    --public-keys FILE --file FILE [--fingerprint F] [--now ISO]
  verify-webhook --secret S --id ID --timestamp T --signature SIG --body-file FILE [--now UNIX_SECONDS]
  check-key      KEY
  validate       --base-url URL --license-key KEY [--fingerprint F] [--entitlement E]...
  activate       --base-url URL --license-key KEY --fingerprint F [--name N]
  heartbeat      --base-url URL --license-key KEY --activation-id ID
  deactivate     --base-url URL --license-key KEY --activation-id ID
  fetch-file     --base-url URL --license-key KEY [--fingerprint F]
  vectors        --dir DIR"""

REPEATABLE = ("entitlement",)

Answer = Tuple[Dict[str, Any], bool]


class Usage(Exception):
    """A usage error: exit status 2, the message on stderr."""


def parse(args: Sequence[str]) -> Tuple[Dict[str, Any], List[str]]:
    """``--name value`` pairs (``--name=value`` too; repeatable ones collected) and the other words."""
    opts: Dict[str, Any] = {}
    words: List[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("--"):
            words.append(arg)
            continue
        name, has_value, value = arg[2:].partition("=")
        if not has_value:
            if i >= len(args):
                raise Usage("%s needs a value" % arg)
            value = args[i]
            i += 1
        if name in REPEATABLE:
            opts.setdefault(name, []).append(value)
        else:
            opts[name] = value
    return opts, words


def need(opts: Dict[str, Any], *names: str) -> None:
    for name in names:
        if name not in opts:
            raise Usage("--%s is required" % name)


def only(opts: Dict[str, Any], *allowed: str) -> None:
    for name in opts:
        if name not in allowed:
            raise Usage("unknown option --%s" % name)


def _read_json(path: str) -> Any:
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8-sig"))


# Each command answers (what to print, whether it is a success: exit 0, or not: exit 1).


def file_answer(file: Any, public_keys: Any, fingerprint: Optional[str], now: Optional[str]) -> Answer:
    v = verify_license_file(file, public_keys, fingerprint=fingerprint, now=now or None)
    return {"valid": v.valid, "code": v.code, "payload": v.payload if v.valid else None}, v.valid


def webhook_answer(secret: str, id: str, timestamp: str, signature: str, body: bytes, now: Any) -> Answer:
    v = verify_webhook(body, id, timestamp, signature, secret, now=now)
    return {"valid": v.valid, "code": v.code}, v.valid


def key_answer(text: str) -> Answer:
    k = check_key(text)
    return {"well_formed": k.well_formed, "normalized": k.normalized, "kind": k.kind, "reason": k.reason}, k.well_formed


def verify_file(opts: Dict[str, Any]) -> Answer:
    only(opts, "public-keys", "file", "fingerprint", "now")
    need(opts, "public-keys", "file")
    return file_answer(_read_json(opts["file"]), _read_json(opts["public-keys"]), opts.get("fingerprint"), opts.get("now"))


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("--now must be Unix seconds, got %r" % text) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("--now must be Unix seconds, got %r" % text)
    return value


def verify_webhook_command(opts: Dict[str, Any]) -> Answer:
    only(opts, "secret", "id", "timestamp", "signature", "body-file", "now")
    need(opts, "secret", "id", "timestamp", "signature", "body-file")
    with open(opts["body-file"], "rb") as f:
        body = f.read()
    now = _seconds(opts["now"]) if "now" in opts else None
    return webhook_answer(opts["secret"], opts["id"], opts["timestamp"], opts["signature"], body, now)


def _api(opts: Dict[str, Any]) -> LicenseApi:
    need(opts, "base-url", "license-key")
    transport = Transport(opts["base-url"], opts["license-key"], timeout=30.0, max_retries=2, max_retry_delay=30.0)
    return LicenseApi(transport, opts["license-key"])


def validate(opts: Dict[str, Any]) -> Answer:
    only(opts, "base-url", "license-key", "fingerprint", "entitlement")
    need(opts, "base-url", "license-key")
    app = LicensedApp(opts["base-url"], opts["license-key"], fingerprint=opts.get("fingerprint", "conformance"))
    answer = app.validate(entitlements=opts.get("entitlement", []))
    return answer, isinstance(answer, dict) and answer.get("valid") is True


def activate(opts: Dict[str, Any]) -> Answer:
    only(opts, "base-url", "license-key", "fingerprint", "name")
    need(opts, "base-url", "license-key", "fingerprint")
    app = LicensedApp(opts["base-url"], opts["license-key"], fingerprint=opts["fingerprint"], name=opts.get("name"))
    return {"activation_id": app.activate()["id"]}, True


def heartbeat(opts: Dict[str, Any]) -> Answer:
    only(opts, "base-url", "license-key", "activation-id")
    need(opts, "activation-id")
    a = _api(opts).heartbeat(opts["activation-id"])
    return {"activation_id": a["id"], "lease_expires_at": a.get("lease_expires_at")}, True


def deactivate(opts: Dict[str, Any]) -> Answer:
    only(opts, "base-url", "license-key", "activation-id")
    need(opts, "activation-id")
    _api(opts).deactivate(opts["activation-id"])
    return {"deactivated": True}, True


def fetch_file(opts: Dict[str, Any]) -> Answer:
    only(opts, "base-url", "license-key", "fingerprint")
    return _api(opts).file(fingerprint=opts.get("fingerprint") or None), True


def vectors(opts: Dict[str, Any]) -> Answer:
    """Every case of the three vector files, through the same code as the single commands."""
    only(opts, "dir")
    need(opts, "dir")
    failed: List[Dict[str, Any]] = []
    passed = 0

    def judge(file: str, name: str, expected: Any, got: Any) -> None:
        nonlocal passed
        # Compared as JSON text, so that true and 1 (equal in Python) stay different.
        if json.dumps(expected, sort_keys=True) == json.dumps(got, sort_keys=True):
            passed += 1
        else:
            failed.append({"file": file, "name": name, "expected": expected, "got": got})

    files = _read_json(os.path.join(opts["dir"], "license-files.json"))
    for c in files["cases"]:
        got, _ = file_answer(c["file"], files["key_sets"][c["key_set"]], c["fingerprint"], c["now"])
        judge("license-files.json", c["name"], c["expect"], got)
    for c in _read_json(os.path.join(opts["dir"], "webhooks.json"))["cases"]:
        got, _ = webhook_answer(c["secret"], c["id"], c["timestamp"], c["signature"], c["body"].encode("utf-8"), c["now"])
        judge("webhooks.json", c["name"], c["expect"], got)
    for c in _read_json(os.path.join(opts["dir"], "license-keys.json"))["cases"]:
        judge("license-keys.json", c["name"], c["expect"], key_answer(c["input"])[0])
    return {"passed": passed, "failed": failed}, not failed


COMMANDS = {
    "verify-file": verify_file,
    "verify-webhook": verify_webhook_command,
    "validate": validate,
    "activate": activate,
    "heartbeat": heartbeat,
    "deactivate": deactivate,
    "fetch-file": fetch_file,
    "vectors": vectors,
}


def run(argv: Sequence[str]) -> Answer:
    if not argv:
        raise Usage("no command given")
    command, rest = argv[0], argv[1:]
    opts, words = parse(rest)
    if command == "check-key":
        if len(words) != 1 or opts:
            raise Usage("check-key takes one KEY")
        return key_answer(words[0])
    if command not in COMMANDS:
        raise Usage("unknown command %s" % command)
    if words:
        raise Usage("unexpected %s" % words[0])
    return COMMANDS[command](opts)


def _print(answer: Any) -> None:
    # ASCII with \\u escapes: any consumer reads the same JSON, whatever the terminal's encoding.
    sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        answer, ok = run(argv)
    except Usage as err:
        sys.stderr.write("%s\n%s\n" % (err, USAGE))
        return 2
    except LicensingError as err:
        _print({"error": {"status": err.status, "code": err.code, "detail": err.detail, "next_action": err.next_action}})
        return 1
    except Exception as err:  # noqa: BLE001 - any other failure is a message and exit 1, never a trace on stdout
        sys.stderr.write("%s: %s\n" % (type(err).__name__, err))
        return 1
    _print(answer)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
