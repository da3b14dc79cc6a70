#!/usr/bin/python3
"""Runs a command under a unit's system call settings, as systemd 252 would.

    scripts/unit-sandbox.py UNIT_FILE COMMAND [ARGUMENTS...]

Where systemd is not PID 1 (the CI container, the bluez-vm guest), this is how
the tests find out whether bleagent lives with its unit's SystemCallFilter=,
SystemCallErrorNumber=, SystemCallArchitectures=native and
MemoryDenyWriteExecute=: it reads those settings from UNIT_FILE, expands the
groups with `systemd-analyze syscall-filter` (plus @default, which systemd
always allows), loads the same seccomp filter with libseccomp (Debian's
python3-seccomp) and executes COMMAND, whose children inherit the filter. A
call outside the list fails with the configured errno, as under systemd.
MemoryDenyWriteExecute= is the rule set systemd installs: no mmap that is
both writable and executable, no mprotect/pkey_mprotect to executable, no
shmat with SHM_EXEC (they fail with the configured errno here). Other settings of the unit are not applied here.
"""
import errno
import os
import subprocess
import sys

import seccomp

PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000


def unit_settings(path):
    settings = {}
    with open(path) as unit:
        for line in unit:
            line = line.strip()
            if line and not line.startswith(("#", ";", "[")) and "=" in line:
                key, value = line.split("=", 1)
                settings.setdefault(key, []).append(value)
    return settings


def syscall_groups():
    """Every @group of `systemd-analyze syscall-filter`, with its members."""
    groups, current = {}, None
    listing = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, check=True)
    for raw in listing.stdout.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not raw.startswith(" "):
            current = line
            groups[current] = []
        elif current:
            groups[current].append(line)
    return groups


def expand(names, groups, seen=None):
    seen = set() if seen is None else seen
    calls = set()
    for name in names:
        if name.startswith("@"):
            if name in seen:
                continue
            seen.add(name)
            calls |= expand(groups.get(name, []), groups, seen)
        else:
            calls.add(name)
    return calls


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    unit, command = sys.argv[1], sys.argv[2:]
    settings = unit_settings(unit)
    groups = syscall_groups()
    allowed, denied = {"@default"}, set()
    for value in settings.get("SystemCallFilter", []):
        if value.startswith("~"):
            denied |= set(value[1:].split())
        else:
            allowed |= set(value.split())
    calls = expand(allowed, groups) - expand(denied, groups)
    error = getattr(errno, settings.get("SystemCallErrorNumber", ["EPERM"])[-1])
    fltr = seccomp.SyscallFilter(defaction=seccomp.ERRNO(error))
    conditional = {}
    if settings.get("MemoryDenyWriteExecute", ["no"])[-1] in ("yes", "true", "1"):
        both = PROT_WRITE | PROT_EXEC
        conditional = {
            "mmap": [(both, 0), (both, PROT_WRITE), (both, PROT_EXEC)],
            "mprotect": [(PROT_EXEC, 0)],
            "pkey_mprotect": [(PROT_EXEC, 0)],
            "shmat": [(SHM_EXEC, 0)],
        }
    for call in sorted(calls):
        try:
            if call in conditional:
                # Allowed only without the forbidden protection bits (argument 3 of each).
                for mask, value in conditional[call]:
                    fltr.add_rule_exactly(seccomp.ALLOW, call, seccomp.Arg(2, seccomp.MASKED_EQ, mask, value))
            else:
                fltr.add_rule(seccomp.ALLOW, call)
        except (RuntimeError, ValueError):
            pass  # not a call on this architecture (the *32, *_time64 variants)
    fltr.load()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
