#!/usr/bin/env bash
# Checks a built bleagent .deb without installing it: its file list, owners
# and modes against contrib/debian/contents.txt, the control fields, the
# conffile, the ELF files' RUNPATH and that every library they need is shipped
# or comes from a declared Debian dependency, the packaged config, the agent on
# the simulator under the unit's system call filter (scripts/unit-sandbox.py),
# the unit (systemd-analyze verify, its security score), the man pages (no groff
# warnings) and, when lintian is installed, lintian (only the tags listed and
# explained in contrib/debian/lintian-expected.txt may appear).
#
# Usage: scripts/check-package.sh DEB
# Exit status: 0 when every check passed, 1 otherwise (each failure printed).
set -uo pipefail
cd "$(dirname "$0")/.."
deb=${1:?usage: scripts/check-package.sh DEB}
failures=0
fail() { echo "check-package: FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "check-package: ok: $*" >&2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/root" && dpkg-deb -e "$deb" "$work/control" || { fail "cannot unpack $deb"; exit 1; }
root=$work/root

# 1. Every path with its mode and owner, exactly as listed.
dpkg-deb -c "$deb" | awk '{ sub(/^\.\//, "/", $6); sub(/\/$/, "", $6); if ($6 != "/") print $1, $2, $6 }' |
    LC_ALL=C sort -k3 > "$work/contents"
if diff -u contrib/debian/contents.txt "$work/contents" > "$work/contents.diff"; then
    pass "file list, owners and modes ($(wc -l < "$work/contents") entries) match contrib/debian/contents.txt"
else
    fail "file list differs from contrib/debian/contents.txt (- expected, + built):"
    cat "$work/contents.diff" >&2
fi

# 2. Control fields and maintainer scripts.
version=$(sed -n 's/.*static let version = "\([^"]*\)".*/\1/p' Sources/AgentCore/Agent.swift)
[ "$(dpkg-deb -f "$deb" Package)/$(dpkg-deb -f "$deb" Version)/$(dpkg-deb -f "$deb" Architecture)" = \
    "bleagent/$version/amd64" ] &&
    pass "Package bleagent, Version $version, Architecture amd64" || fail "control fields: $(dpkg-deb -f "$deb")"
depends=$(dpkg-deb -f "$deb" Depends)
for dep in adduser libc6 libdbus-1-3 libjson-c5 libmosquitto1; do
    [[ ", $depends," == *", $dep"[\ ,]* ]] || fail "Depends lacks $dep: $depends"
done
[[ "$depends" != *swift* ]] || fail "Depends names a Swift package: $depends"
[ "$(cat "$work/control/conffiles")" = /etc/bleagent/roles.json ] &&
    pass "conffiles: /etc/bleagent/roles.json" || fail "conffiles: $(cat "$work/control/conffiles")"
for script in postinst prerm postrm; do
    sh -n "$work/control/$script" || fail "$script does not parse"
done
grep -q 'adduser --quiet --system --group' "$work/control/postinst" &&
    grep -q 'gecos "Bluetooth Low Energy agent" bleagent$' "$work/control/postinst" &&
    grep -q 'adduser --quiet bleagent bluetooth' "$work/control/postinst" &&
    pass "postinst creates the bleagent user in group bluetooth" || fail "postinst does not create the user"

# 3. ELF files: RUNPATH only the private library directory, and every needed
# library either shipped there or a system library of a declared dependency.
elf_ok=1
while IFS= read -r file; do
    runpath=$(readelf -d "$file" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    case "${file#"$root"}" in
        /usr/lib/bleagent/libswift* | /usr/lib/bleagent/libdispatch.so | /usr/lib/bleagent/libBlocksRuntime.so)
            [ -z "$runpath" ] || [ "$runpath" = '$ORIGIN' ] || { fail "$file: RUNPATH $runpath"; elf_ok=0; } ;;
        *) [ "$runpath" = /usr/lib/bleagent ] || { fail "${file#"$root"}: RUNPATH '$runpath'"; elf_ok=0; } ;;
    esac
    for lib in $(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        [ -e "$root/usr/lib/bleagent/$lib" ] && continue
        owner=$(dpkg -S "*/$lib" 2>/dev/null | grep -v -e '^diversion' | head -n 1 | cut -d: -f1)
        if [ -z "$owner" ] || [[ ", $depends," != *", $owner"[\ ,]* ]]; then
            fail "${file#"$root"} needs $lib, neither shipped nor from a Depends package (owner: ${owner:-none})"
            elf_ok=0
        fi
    done
done < <(find "$root" -type f \( -path '*/usr/bin/*' -o -name '*.so' \) | LC_ALL=C sort)
[ "$elf_ok" = 1 ] && pass "RUNPATH /usr/lib/bleagent; every needed library shipped or from Depends"
if grep -rlq /opt/swift "$root/usr/bin" "$root/usr/lib"; then
    fail "files refer to the build machine's /opt/swift: $(grep -rl /opt/swift "$root/usr/bin" "$root/usr/lib" | tr '\n' ' ')"
fi

# 4. The shipped binaries run with only the shipped runtime: no toolchain on the path.
export LD_LIBRARY_PATH=$root/usr/lib/bleagent
if "$root/usr/bin/bleagent" --version | grep -qx "bleagent $version (control API [0-9]*)"; then
    pass "bleagent --version runs from the package's libraries"
else
    fail "bleagent --version: $("$root/usr/bin/bleagent" --version 2>&1)"
fi
"$root/usr/bin/blectl" --help | grep -q '^usage: blectl' || fail "blectl --help"
"$root/usr/bin/blesim" --help | grep -q '^usage: blesim' || fail "blesim --help"
if ldd "$root"/usr/bin/* "$root"/usr/lib/bleagent/plugins/*.so | grep -e 'not found' -e /opt/swift; then
    fail "a library resolves outside the package and the system (above)"
fi
# The packaged config and the examples are valid. --check-config loads each
# plugin's validation, so the configs point at the unpacked tree's plugins;
# the operator group the package's postinst creates is replaced by root when
# this machine lacks it.
checkable() {
    local group=bleagent-operators
    getent group bleagent-operators >/dev/null || group=root
    jq --arg plugins "$root/usr/lib/bleagent/plugins" --arg group "$group" \
        '.pluginDirectory = $plugins | if .control.group == "bleagent-operators" then .control.group = $group else . end' "$1"
}
checkable "$root/etc/bleagent/roles.json" > "$work/roles.json"
check=$("$root/usr/bin/bleagent" --check-config --config "$work/roles.json" 2>&1)
[[ "$check" == *"valid (role central, backend bluez)"* ]] || fail "packaged roles.json: $check"
for example in "$root"/usr/share/doc/bleagent/examples/*.json; do
    checkable "$example" > "$work/example.json"
    "$root/usr/bin/bleagent" --check-config --config "$work/example.json" >/dev/null 2>&1 ||
        fail "$(basename "$example"): $("$root/usr/bin/bleagent" --check-config --config "$work/example.json" 2>&1)"
done
pass "the packaged roles.json and the examples are valid (bleagent --check-config)"

# The packaged agent on the simulator (the packaged example, paths into the
# unpacked tree) under the unit's system call filter and W^X rules
# (scripts/unit-sandbox.py): its children, the private bus and blesim, too.
if /usr/bin/python3 -c 'import seccomp' 2>/dev/null; then
    jq --arg root "$root" --arg work "$work" '.control.socket = "\($work)/run/control.sock" | del(.control.group)
        | .restore.stateDirectory = "\($work)/state" | .pluginDirectory = "\($root)/usr/lib/bleagent/plugins"
        | .sim.scenario = "\($root)/usr/share/bleagent/scenarios/default.json"' \
        "$root/usr/share/doc/bleagent/examples/roles-simulator.json" > "$work/sim.json"
    /usr/bin/python3 scripts/unit-sandbox.py "$root/lib/systemd/system/bleagent.service" \
        "$root/usr/bin/bleagent" --config "$work/sim.json" > "$work/sandbox.log" 2>&1 &
    agent=$!
    selected=no
    for _ in $(seq 300); do
        "$root/usr/bin/blectl" --socket "$work/run/control.sock" --json call pos.terminals 2>/dev/null |
            jq -e '.terminals[] | select(.selected)' >/dev/null 2>&1 && { selected=yes; break; }
        kill -0 "$agent" 2>/dev/null || break
        sleep 0.2
    done
    "$root/usr/bin/blectl" --socket "$work/run/control.sock" shutdown >/dev/null 2>&1
    wait "$agent"
    rc=$?
    if [ "$selected" = yes ] && [ "$rc" -eq 0 ]; then
        pass "the packaged agent, blesim and the private bus run under the unit's SystemCallFilter and MemoryDenyWriteExecute"
    else
        fail "under the unit's system call filter: terminal selected: $selected, exit $rc; its log:"
        cat "$work/sandbox.log" >&2
    fi
else
    fail "python3-seccomp is not installed: the unit's system call filter is not checked (apt-get install python3-seccomp)"
fi
unset LD_LIBRARY_PATH

# 5. The unit, as installed.
# Verified on this machine's systemd with ExecStart pointed at the unpacked
# agent (the man pages it names are checked installed, in Tests/VM/package.sh).
unit=$root/lib/systemd/system/bleagent.service
sed "s#^ExecStart=/usr/bin/bleagent #ExecStart=$root/usr/bin/bleagent #" "$unit" > "$work/bleagent.service"
if out=$(systemd-analyze verify --man=no "$work/bleagent.service" 2>&1) && [ -z "$out" ]; then
    pass "systemd-analyze verify bleagent.service"
else
    fail "systemd-analyze verify: $out"
fi
for line in User=bleagent Group=bleagent "ExecStart=/usr/bin/bleagent --config /etc/bleagent/roles.json" \
    RuntimeDirectory=bleagent StateDirectory=bleagent NoNewPrivileges=yes CapabilityBoundingSet= \
    ProtectSystem=strict ProtectHome=yes PrivateTmp=yes RestrictAddressFamilies=AF_UNIX \
    SystemCallFilter=@system-service; do
    grep -qxF "$line" "$unit" || fail "the unit lacks $line"
done
score=$(systemd-analyze security --offline=yes --root="$root" /lib/systemd/system/bleagent.service 2>/dev/null |
    sed -n 's/.*Overall exposure level for bleagent.service: \([0-9.]*\).*/\1/p')
if [ -n "$score" ] && awk "BEGIN { exit !($score <= 2.0) }"; then
    pass "systemd-analyze security: exposure $score"
else
    fail "systemd-analyze security: exposure '${score:-none}' (at most 2.0 expected)"
fi

bash -n "$root/usr/share/bash-completion/completions/blectl" || fail "blectl's bash completion does not parse"

# 6. Man pages render without warnings.
for page in "$root"/usr/share/man/man*/*.gz; do
    warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
done
pass "man pages: $(cd "$root/usr/share/man" && ls man*/*.gz | tr '\n' ' ')"

# 7. lintian, if installed.
if command -v lintian >/dev/null; then
    lintian --no-cfg --display-info --display-experimental "$deb" > "$work/lintian" 2>&1
    tags=$(sed -n 's/^[EWIXPO]: bleagent: \([^ ]*\).*/\1/p' "$work/lintian" | LC_ALL=C sort -u)
    expected=$(sed -n 's/^\([a-z0-9-]*\):.*/\1/p' contrib/debian/lintian-expected.txt | LC_ALL=C sort -u)
    unexpected=$(comm -23 <(echo "$tags") <(echo "$expected") | grep . || true)
    if [ -n "$unexpected" ]; then
        fail "lintian tags not in contrib/debian/lintian-expected.txt: $(echo $unexpected)"
        cat "$work/lintian" >&2
    else
        pass "lintian: only the explained tags ($(echo $tags))"
    fi
else
    echo "check-package: lintian is not installed; skipped (apt-get install lintian)" >&2
fi

[ "$failures" -eq 0 ] && echo "check-package: all checks passed for $deb" >&2
exit $((failures > 0))
