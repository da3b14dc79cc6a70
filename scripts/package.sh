#!/usr/bin/env bash
# Builds the Debian package bleagent_<version>_amd64.deb with dpkg-deb from a
# release build (docs/install.md says what goes where and why).
#
# Usage: scripts/package.sh [--out DIR]     (default: .build/package)
# Prints the .deb's (absolute) path on stdout. The staging tree is left in DIR/root for
# scripts/check-package.sh. Packaging files live in contrib/debian; man pages
# are generated from docs/man/*.md with go-md2man.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

out=.build/package
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "package.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done

out=$(realpath -m "$out")
# dpkg-dev: dpkg-shlibdeps; binutils: strip and readelf; go-md2man: the man pages.
ensure_setup dpkg-dev binutils go-md2man
umask 022

version=$(sed -n 's/.*static let version = "\([^"]*\)".*/\1/p' Sources/AgentCore/Agent.swift)
changelog_version=$(sed -n '1s/^bleagent (\([^)]*\)).*/\1/p' contrib/debian/changelog)
[ -n "$version" ] || { echo "package.sh: no version in Sources/AgentCore/Agent.swift" >&2; exit 1; }
if [ "$version" != "$changelog_version" ]; then
    echo "package.sh: contrib/debian/changelog's newest entry is $changelog_version, the agent says $version" >&2
    exit 1
fi
# The maintainer: DEBFULLNAME and DEBEMAIL, as Debian's tools read them.
maintainer="${DEBFULLNAME:-bleagent authors} <${DEBEMAIL:-bleagent@localhost}>"
libdir=/usr/lib/bleagent
# One RUNPATH, $libdir: no $ORIGIN (a plugin would look for the core in the
# plugin directory first) and nothing of the toolchain that built it. The
# binaries, the core and the plugins find libBLECore.so and the runtime there.
# -z now, -z relro: full RELRO, as Debian's hardening flags ask. Its own scratch
# path: these link flags differ from a plain `swift build -c release` (blebench's),
# so sharing .build/release would rebuild everything at each switch.
flags=(-c release --scratch-path .build/package-release --disable-local-rpath -Xswiftc -no-toolchain-stdlib-rpath -Xlinker "-rpath=$libdir"
    -Xlinker -z -Xlinker now
    -Xlinker -z -Xlinker relro)
executables=(bleagent blectl blesim)
plugins=(Diagnostics PaymentTerminalScanner SensorAggregator SensorGateway VirtualPaymentTerminal)

log "release build: ${executables[*]} ${plugins[*]}"
start=$SECONDS
for product in "${executables[@]}" "${plugins[@]}"; do
    swift build "${flags[@]}" --product "$product" >&2
done
build=$(swift build "${flags[@]}" --show-bin-path)
log "release build took $((SECONDS - start)) s"

root=$out/root
rm -rf "$root"
mkdir -p "$root/DEBIAN"
dirs=(usr/bin "$libdir/plugins" lib/systemd/system etc/bleagent usr/share/bleagent/scenarios
    usr/share/doc/bleagent/examples usr/share/man/man1 usr/share/man/man5 usr/share/man/man8
    usr/share/bash-completion/completions)
for d in "${dirs[@]}"; do install -d -m 0755 "$root/${d#/}"; done

# Executables keep .dynsym (plugins resolve the core's symbols through it);
# like dh_strip, the static symbol table goes. Plugins are root's, mode 0755,
# in a 0755 directory: no one but root can replace what the agent loads.
for exe in "${executables[@]}"; do
    install -m 0755 "$build/$exe" "$root/usr/bin/$exe"
    strip --remove-section=.comment "$root/usr/bin/$exe"
done
install -m 0644 "$build/libBLECore.so" "$root$libdir/libBLECore.so"
strip --strip-unneeded --remove-section=.comment "$root$libdir/libBLECore.so"
for plugin in "${plugins[@]}"; do
    install -m 0755 "$build/lib$plugin.so" "$root$libdir/plugins/lib$plugin.so"
    strip --strip-unneeded --remove-section=.comment "$root$libdir/plugins/lib$plugin.so"
done

# The Swift runtime: every library the packaged ELF files need, transitively,
# that the toolchain provides (the rest come from Debian packages, found by
# dpkg-shlibdeps below).
toolchain_libs=$(dirname "$(command -v swift)")/../lib/swift/linux
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
queue=("$root"/usr/bin/* "$root$libdir"/libBLECore.so "$root$libdir"/plugins/*.so)
while [ ${#queue[@]} -gt 0 ]; do
    file=${queue[0]}
    queue=("${queue[@]:1}")
    for lib in $(needed "$file"); do
        [ -e "$root$libdir/$lib" ] && continue
        if [ -e "$toolchain_libs/$lib" ]; then
            install -m 0644 "$toolchain_libs/$lib" "$root$libdir/$lib"
            strip --strip-unneeded --remove-section=.comment "$root$libdir/$lib"
            queue+=("$root$libdir/$lib")
        fi
    done
done

install -m 0644 contrib/debian/roles.json "$root/etc/bleagent/roles.json"
install -m 0644 contrib/systemd/bleagent.service "$root/lib/systemd/system/bleagent.service"
install -m 0644 contrib/bash-completion/blectl "$root/usr/share/bash-completion/completions/blectl"
install -D -m 0644 contrib/debian/lintian-overrides "$root/usr/share/lintian/overrides/bleagent"
install -m 0644 sim/scenarios/*.json "$root/usr/share/bleagent/scenarios/"

# Man pages: Markdown in docs/man, rendered by go-md2man, dated by the changelog.
date=$(dpkg-parsechangelog -l contrib/debian/changelog -S Date | LC_ALL=C date -u -f - '+%B %Y')
for page in docs/man/*.md; do
    name=$(basename "$page" .md)
    section=${name##*.}
    sed -e "s/@VERSION@/$version/" -e "1s/\"\"/\"$date\"/" "$page" | go-md2man |
        gzip -9n > "$root/usr/share/man/man$section/$name.gz"
done

# Documentation: text over 4 KiB compressed, as dh_compress does.
doc=$root/usr/share/doc/bleagent
install -m 0644 contrib/debian/copyright "$doc/copyright"
sed "s/^ -- .*>  / -- $maintainer  /" contrib/debian/changelog | gzip -9n > "$doc/changelog.gz"
install -m 0644 README.md "$doc/README.md"
for f in install config control-api plugins blesim ble-api ARCHITECTURE; do
    install -m 0644 "docs/$f.md" "$doc/$f.md"
done
install -d -m 0755 "$doc/profiles"
install -m 0644 docs/profiles/*.md "$doc/profiles/"
install -m 0644 contrib/debian/examples/*.json "$doc/examples/"
find "$doc" -type f -name '*.md' -size +4k -exec gzip -9n {} +

# Control files.
install -m 0644 contrib/debian/conffiles "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do install -m 0755 "contrib/debian/$script" "$root/DEBIAN/$script"; done
shlibs=$(mktemp -d)
trap 'rm -rf "$shlibs"' EXIT
mkdir "$shlibs/debian"
printf 'Source: bleagent\n\nPackage: bleagent\nArchitecture: amd64\n' > "$shlibs/debian/control"
elf_files=("$root"/usr/bin/* "$root$libdir"/*.so "$root$libdir"/plugins/*.so)
if ! (cd "$shlibs" && dpkg-shlibdeps -O -S"$root" "${elf_files[@]}") > "$shlibs/substvars" 2> "$shlibs/warnings"; then
    cat "$shlibs/warnings" >&2
    exit 1
fi
depends=$(sed -n 's/^shlibs:Depends=//p' "$shlibs/substvars")
# Expected: the private Swift libraries have no SONAME version and no shlibs
# entry (they are in this package), and one runtime library links another it
# does not use. Anything else is shown.
grep -v -e "can't extract name and version from library name" -e 'could avoid a useless dependency' \
    "$shlibs/warnings" >&2 || true
[ -n "$depends" ] || { echo "package.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# The fleet loads libmosquitto at run time (dlopen, Sources/CMosquitto), so no
# ELF file names it and dpkg-shlibdeps cannot see it: it is named here.
depends="libmosquitto1 (>= 2.0), $depends"
size=$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@INSTALLED_SIZE@/$size/" -e "s/@DEPENDS@/adduser, $depends/" -e "s/@MAINTAINER@/$maintainer/" \
    contrib/debian/control.in > "$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"

# Reproducible: every file dated by the last commit.
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
find "$root" -exec touch -h -d "@$epoch" {} +
deb=$out/bleagent_${version}_amd64.deb
# Written beside, then renamed: a reader (the VM payload) never sees half a package.
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$root" "$deb.partial" >&2
mv "$deb.partial" "$deb"
echo "$deb"
