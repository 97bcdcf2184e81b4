"""A stable, non-identifying id of this machine, for activations when the app has none of its own."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
import uuid
from typing import Optional


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read().strip()
        return text or None
    except OSError:
        return None


def _machine_id() -> str:
    if sys.platform.startswith("win"):
        try:
            import winreg

            with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"SOFTWARE\Microsoft\Cryptography") as key:
                value, _ = winreg.QueryValueEx(key, "MachineGuid")
                if value:
                    return str(value)
        except OSError:
            pass
    elif sys.platform == "darwin":
        try:
            out = subprocess.run(
                ["ioreg", "-rd1", "-c", "IOPlatformExpertDevice"],
                capture_output=True,
                text=True,
                timeout=5,
            ).stdout
            for line in out.splitlines():
                if "IOPlatformUUID" in line:
                    return line.split("=", 1)[1].strip().strip('"')
        except (OSError, subprocess.SubprocessError, IndexError):
            pass
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id", "/etc/hostid"):
        text = _read(path)
        if text:
            return text
    node = uuid.getnode()
    # uuid.getnode() makes up a random number (multicast bit set) when it finds no hardware address.
    if not (node >> 40) & 1:
        return "mac:%012x" % node
    return "host:" + platform.node()


def machine_fingerprint(namespace: str = "") -> str:
    """32 hex characters derived from the operating system's machine id (``/etc/machine-id``, the
    Windows ``MachineGuid``, the Mac's ``IOPlatformUUID``; else a hardware address or the host name),
    hashed so the raw id never leaves the machine. ``namespace`` (LicensedApp passes the product id)
    gives each product its own value, so two vendors cannot match their customers' machines.

    Containers cloned from one image may share a machine id: pass your own fingerprint there.
    """
    raw = "licensing-client:%s:%s" % (namespace, _machine_id())
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]
