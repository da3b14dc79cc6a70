#!/usr/bin/python3
"""Compare two conformance recordings (probe.py output).

  compare.py EXPECTED.json ACTUAL.json

EXPECTED is the real bluetoothd's (Tests/Conformance/bluez-5.66.json); ACTUAL
is blesim's. Prints one line per difference, as the JSON path of the value,
what bluetoothd did and what the other did. Exit 0 when equal, 1 otherwise.
"""
import json
import sys

MISSING = '<absent>'


def event(e):
    """One recorded event (signal or reply) as a short line."""
    if 'reply' in e:
        return 'reply %s%s' % (e['reply'], ' -> ' + e['error'] if 'error' in e else '')
    changed = {k: v.get('value', '<' + v['type'] + '>') for k, v in e.get('changed', {}).items()}
    rest = json.dumps(changed, sort_keys=True) if 'changed' in e else ' '.join(e.get('interfaces', []))
    return '%s %s %s' % (e.get('signal'), e.get('path'), rest)


def show(v):
    if isinstance(v, list) and v and all(isinstance(x, dict) and ('reply' in x or 'signal' in x) for x in v):
        return '[' + '; '.join(event(x) for x in v) + ']'
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= 400 else s[:397] + '...'


def walk(path, exp, act, out):
    if isinstance(exp, dict) and isinstance(act, dict):
        for k in sorted(set(exp) | set(act)):
            if k == 'info':
                continue  # timing-dependent observations, recorded but not compared
            walk(path + [k], exp.get(k, MISSING), act.get(k, MISSING), out)
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
