#!/usr/bin/python3
"""Compare two conformance recordings (probe.py output).

  compare.py EXPECTED.json ACTUAL.json

EXPECTED is the real bluetoothd's (tests/conformance/bluez-5.66.json); ACTUAL
is blesim's. Prints one line per difference, as the JSON path of the value,
what bluetoothd did and what the other did. Exit 0 when equal, 1 otherwise.
"""
import json
import sys

MISSING = '<absent>'


def show(v):
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= 300 else s[:297] + '...'


def walk(path, exp, act, out):
    if isinstance(exp, dict) and isinstance(act, dict):
        for k in sorted(set(exp) | set(act)):
            if k == 'info':
                continue  # timing-dependent observations, recorded but not compared
            walk(path + [k], exp.get(k, MISSING), act.get(k, MISSING), out)
    elif isinstance(exp, list) and isinstance(act, list) and len(exp) == len(act) and \
            any(isinstance(x, (dict, list)) for x in exp):
        for i, (e, a) in enumerate(zip(exp, act)):
            walk(path + [str(i)], e, a, out)
    elif exp != act:
        out.append((path, exp, act))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        exp = json.load(f)
    with open(sys.argv[2]) as f:
        act = json.load(f)
    out = []
    walk([], exp.get('checks', {}), act.get('checks', {}), out)
    for path, e, a in out:
        print('%s\n    bluetoothd: %s\n    other:      %s' % ('.'.join(path), show(e), show(a)))
    print('%d difference(s)' % len(out), file=sys.stderr)
    return 1 if out else 0


if __name__ == '__main__':
    sys.exit(main())
