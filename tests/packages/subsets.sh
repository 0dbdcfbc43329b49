#!/usr/bin/env bash
# packages.subsets_install_side_by_side: the Debian packages of cmake/Packaging.cmake
# ship real subsets, beside Debian's OpenPMIx.
#
#   subsets.sh CPACK BUILD_DIR PACKAGE_PREFIX LIBDIR BINDIR EXAMPLES_DIR DEBIAN_FILES
#              SOURCE_DIR STRIPPED CC [SANITIZE]
#
# 1. `cpack -G DEB` from BUILD_DIR, as built, into a temporary directory (one run); each
#    package has a synopsis of its own (the Description's first line);
# 2. pmixpp-bin ships pmixrun(1) and pmix_info(1), gzipped; every package has
#    /usr/share/doc/<package>/copyright; no other file of ours is outside
#    PACKAGE_PREFIX, and none has the path of a file of Debian's
#    libpmix2/libpmix-dev/libpmix-bin/python3-pmix (DEBIAN_FILES plus `dpkg -L`
#    of those installed here); with STRIPPED (PMIXPP_PACKAGE_STRIP) no ELF file
#    carries debug information;
# 3. each package's ELF files: every NEEDED library is ours (libpmix.so.2, and the
#    package then depends on libpmixpp2) or belongs to a system package named in
#    the package's Depends; only the plog_email package depends on libcurl;
# 4. core + bin unpacked (`dpkg -x`) into a scratch root, LD_LIBRARY_PATH unset:
#    pmix_info lists exactly the core package's components; pmixrun -n 4 hello
#    runs, every rank greets, nothing is said about a missing component;
# 5. the same plus the plog_email package: pmix_info lists plog_email too;
# 6. core + bin + dev unpacked alone: `pkg-config pmix` (its prefix relative to
#    the .pc file) builds examples/hello, which runs under the unpacked pmixrun
#    on the unpacked library; examples/component builds with find_package(pmixpp)
#    and the unpacked pmix_info loads it;
# 7. real dpkg, into a private root with its own database (`dpkg --root`):
#    -i of core, bin and the email package, then -r of the email package:
#    plog_email is gone from pmix_info and pmixrun runs with nothing said about
#    it; -r of the rest leaves no file of ours behind;
# 8. the admin's switch of docs/packaging.md (an ld.so.conf.d file read before
#    Debian's): in a private mount namespace (`unshare -m`, as root), a loader
#    cache made by ldconfig from the machine's configuration plus that file is
#    bound over /etc/ld.so.cache; there Debian's python3-pmix (no RUNPATH) maps
#    the unpacked libpmix.so.2, and outside it still maps Debian's. Skipped,
#    saying so, where there is no mount namespace or no python3-pmix, and in
#    a sanitized build.
set -u
CPACK=$1 BUILD=$2 PREFIX=$3 LIBDIR=$4 BINDIR=$5 EXDIR=$6 DEBIAN_FILES=$7
SRC=$8 STRIPPED=$9 CC=${10} SANITIZE=${11:-}

fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pmixpp-packages.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH LD_PRELOAD
for v in $(compgen -e | grep '^PMIX_'); do unset "$v"; done

# 1. the packages, from the tree as it was built (like every other test, this
# one runs what the build made). CPack would first run the Makefile generator's
# `preinstall` target, which re-checks every target of the build (20-40 s, and
# it would rebuild a stale tree under the tests running beside this one).
# Naming a generator that has no such target skips it; ninja itself is never
# run (it need not be installed), and the install scripts and the packages are
# the same.
(cd "$work" && "$CPACK" -G DEB --config "$BUILD/CPackConfig.cmake" -B "$work/debs" \
    -D CPACK_CMAKE_GENERATOR=Ninja) >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log" >&2; fail "cpack -G DEB"; }
declare -A deb  # package name -> .deb file
for f in "$work"/debs/*.deb; do
    [ -e "$f" ] || fail "cpack made no .deb"
    deb[$(dpkg-deb -f "$f" Package)]=$f
done
for p in libpmixpp2 pmixpp-bin pmixpp-dev; do
    [ -n "${deb[$p]:-}" ] || fail "no package $p (made: ${!deb[*]})"
done
email=""
[ -e "$BUILD/$LIBDIR/pmix/pmix_mca_plog_email.so" ] && email=pmixpp-mca-plog-email
[ -z "$email" ] || [ -n "${deb[$email]:-}" ] || fail "plog_email is built but there is no package $email"
echo "packages: ${!deb[*]}"
declare -A synopsis
for p in "${!deb[@]}"; do
    line=$(dpkg-deb -f "${deb[$p]}" Description | head -1)
    [ -n "${synopsis[$line]:-}" ] && fail "$p and ${synopsis[$line]} have the same synopsis: $line"
    synopsis[$line]=$p
done
echo "synopses: one per package"

depends_of() { dpkg-deb -f "${deb[$1]}" Depends; }
files_of() { dpkg-deb --fsys-tarfile "${deb[$1]}" | tar -t | sed 's|^\./|/|' | grep -v '/$'; }

# 2. paths
{ grep -v '^#' "$DEBIAN_FILES"
  for p in libpmix2 libpmix-dev libpmix-bin python3-pmix; do dpkg -L "$p" 2>/dev/null; done; } |
    sort -u >"$work/debian_files"
for p in "${!deb[@]}"; do
    files_of "$p" >"$work/files.$p"
    [ -s "$work/files.$p" ] || fail "$p ships no file"
    grep -qx "/usr/share/doc/$p/copyright" "$work/files.$p" || fail "$p has no /usr/share/doc/$p/copyright"
    outside=$(grep -v "^$PREFIX/" "$work/files.$p" | grep -v "^/usr/share/doc/$p/")
    [ -z "$outside" ] || fail "$p ships files outside $PREFIX and /usr/share/doc/$p: $outside"
    clash=$(sort -u "$work/files.$p" | comm -12 - "$work/debian_files")
    [ -z "$clash" ] || fail "$p ships files of Debian's OpenPMIx packages: $clash"
done
for page in pmixrun.1 pmix_info.1; do
    grep -q "^$PREFIX/.*/man1/$page\.gz$" "$work/files.pmixpp-bin" || fail "pmixpp-bin does not ship the man page $page.gz"
done
echo "paths: all under $PREFIX (copyright in /usr/share/doc), none of Debian's OpenPMIx; pmixpp-bin has the man pages"

# 3. NEEDED against Depends
# Each library's owner is asked of dpkg once, each ELF file's ldd and `file`
# are run once (the same libraries come up in every package).
declare -A owner_cache is_elf_cache
owner_of() {  # system package owning the library at path $1, into $owner
    local path=$1 real c o
    if [ -n "${owner_cache[$path]+set}" ]; then owner=${owner_cache[$path]}; return; fi
    owner=""
    real=$(realpath "$path")
    for c in "$path" "$real" "${path#/usr}" "${real#/usr}" "/usr${path#/usr}" "/usr${real#/usr}"; do
        o=$(dpkg-query -S "$c" 2>/dev/null | head -1 | sed 's/[:,].*//')
        [ -n "$o" ] && { owner=$o; break; }
    done
    owner_cache[$path]=$owner
}
is_elf() {  # whether $1 is an ELF file
    if [ -z "${is_elf_cache[$1]+set}" ]; then
        is_elf_cache[$1]=no
        file -b "$1" | grep -q '^ELF' && is_elf_cache[$1]=yes
    fi
    [ "${is_elf_cache[$1]}" = yes ]
}
mkdir -p "$work/all"
for p in "${!deb[@]}"; do dpkg -x "${deb[$p]}" "$work/all"; done
if [ "$STRIPPED" = ON ]; then
    for p in "${!deb[@]}"; do
        while read -r f; do
            is_elf "$work/all$f" || continue
            readelf -S "$work/all$f" | grep -q '\.debug_info' && fail "$p: $f is not stripped"
        done <"$work/files.$p"
    done
    echo "stripped: no ELF file carries .debug_info"
fi
for p in "${!deb[@]}"; do
    deps=$(depends_of "$p")
    # what this package's own dependencies on our packages bring
    for q in "${!deb[@]}"; do
        [[ ", $deps," == *", $q"[\ ,]* ]] && deps="$deps, $(depends_of "$q")"
    done
    while read -r f; do
        elf=$work/all$f
        is_elf "$elf" || continue
        libs=$(ldd "$elf")
        while read -r lib; do
            if [ "$lib" = libpmix.so.2 ]; then
                [ "$p" = libpmixpp2 ] || [[ "$deps" == *libpmixpp2* ]] ||
                    fail "$p: $f needs libpmix.so.2 but $p does not depend on libpmixpp2"
                continue
            fi
            path=$(awk -v l="$lib" '{ n = $1; sub(".*/", "", n) } n == l { print ($2 == "=>") ? $3 : $1; exit }' <<<"$libs")
            [ -n "$path" ] && [ -e "$path" ] || fail "$p: $f: NEEDED $lib not found by ldd"
            owner_of "$path"
            sys=$owner
            [ -n "$sys" ] || fail "$p: $f: no package owns $path ($lib)"
            [[ ", $deps," == *", $sys "* || ", $deps," == *", $sys,"* ]] ||
                fail "$p: $f needs $lib (package $sys), not in Depends: $(depends_of "$p")"
        done < <(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    done <"$work/files.$p"
    echo "  $p Depends: $(depends_of "$p")"
    [[ ", $(depends_of "$p")," == *", libpmix2"[\ ,]* ]] && fail "$p depends on Debian's libpmix2"
    case $(depends_of "$p") in
    *libcurl*) [ "$p" = "$email" ] || fail "$p depends on libcurl: $(depends_of "$p")" ;;
    *) [ "$p" != "$email" ] || fail "$email does not depend on libcurl" ;;
    esac
done
echo "NEEDED: covered by each package's Depends; only ${email:-no package} depends on libcurl"

# 4. core + bin alone
run_tree() {  # run_tree <root> <packages...>: unpack; set info=pmix_info's component list
    local root=$1; shift
    for p in "$@"; do dpkg -x "${deb[$p]}" "$root" || fail "dpkg -x $p"; done
    local out
    out=$("$root$PREFIX/$BINDIR/pmix_info" 2>&1) || { echo "$out" >&2; fail "pmix_info in $root"; }
    echo "$out" >"$root.info"
    info=$(echo "$out" | sed -n 's|^ *path: .*/\(pmix_mca_[a-z0-9_]*\)\.so$|\1|p' | sort)
}
want=$(grep -o 'pmix_mca_[a-z0-9_]*\.so$' "$work/files.libpmixpp2" | sed 's/\.so$//' | sort)
[ -n "$want" ] || fail "libpmixpp2 ships no component"
run_tree "$work/core" libpmixpp2 pmixpp-bin
[ "$info" = "$want" ] ||
    { cat "$work/core.info" >&2; fail "core+bin: pmix_info lists [$info], the core package has [$want]"; }
echo "core+bin: pmix_info lists the core components: $(echo $info)"
out=$(timeout 120 "$work/core$PREFIX/$BINDIR/pmixrun" -n 4 "$work/core$PREFIX/$EXDIR/hello" 2>"$work/core.err")
rc=$?
[ $rc -eq 0 ] || { echo "$out"; cat "$work/core.err" >&2; fail "core+bin: pmixrun -n 4 hello exited $rc"; }
n=$(echo "$out" | grep -ci 'hello')
[ "$n" -ge 4 ] || { echo "$out"; fail "core+bin: $n of 4 ranks greeted"; }
if grep -Ei 'plog|email|syslog|component|warn|error' "$work/core.err" >&2; then
    fail "core+bin: pmixrun said the above about a missing component"
fi
echo "core+bin: pmixrun -n 4 hello ran, nothing said about missing components"

# 5. plus the email package
if [ -n "$email" ]; then
    run_tree "$work/email" libpmixpp2 pmixpp-bin "$email"
    printf '%s\n' $info | grep -qx pmix_mca_plog_email ||
        { cat "$work/email.info" >&2; fail "with $email: pmix_info does not list plog_email"; }
    echo "core+bin+$email: pmix_info lists plog_email"
fi

# 6. the -dev package against the unpacked core: pkg-config and find_package
dev=$work/dev
run_tree "$dev" libpmixpp2 pmixpp-bin pmixpp-dev
export PKG_CONFIG_PATH=$dev$PREFIX/$LIBDIR/pkgconfig
flags=$(pkg-config --cflags --libs pmix) || fail "pkg-config pmix in the unpacked -dev"
[[ "$flags" == *"-I$dev$PREFIX/"* ]] || fail "pkg-config --cflags does not point into the unpacked tree: $flags"
# shellcheck disable=SC2086
# (a sanitized build's library needs its program built with the same sanitizers)
"$CC" -o "$work/hello_pc" "$SRC/examples/hello/hello.c" $flags -Wl,-rpath,"$dev$PREFIX/$LIBDIR" \
    ${SANITIZE:+-fsanitize=$SANITIZE} ||
    fail "examples/hello does not build with pkg-config pmix"
unset PKG_CONFIG_PATH
out=$(timeout 120 "$dev$PREFIX/$BINDIR/pmixrun" -n 2 "$work/hello_pc" 2>&1) ||
    { echo "$out" >&2; fail "hello built with pkg-config does not run"; }
grep -q "$dev$PREFIX/$LIBDIR/libpmix.so.2" <(LD_TRACE_LOADED_OBJECTS=1 "$work/hello_pc") ||
    fail "hello built with pkg-config does not load the unpacked libpmix.so.2"
cmake -S "$SRC/examples/component" -B "$work/component" -DCMAKE_PREFIX_PATH="$dev$PREFIX" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/component.log" 2>&1 &&
    cmake --build "$work/component" >>"$work/component.log" 2>&1 ||
    { cat "$work/component.log" >&2; fail "examples/component does not build against the unpacked -dev"; }
out=$(PMIX_MCA_mca_base_component_path="$work/component:@default@" "$dev$PREFIX/$BINDIR/pmix_info" --parsable 2>&1)
echo "$out" | grep -q "^mca:plog:example:selected:yes" ||
    { echo "$out" >&2; fail "the unpacked pmix_info does not load the out-of-tree component"; }
echo "dev: pkg-config builds hello (runs on the unpacked library); examples/component builds and loads"

# 7. dpkg -i / -r into a private root
root=$work/dpkg
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" && touch "$root/var/lib/dpkg/status"
# --force-depends: the system libraries are installed on this machine, not in
# the private root's database.
dpkg --root="$root" --force-depends -i "${deb[libpmixpp2]}" "${deb[pmixpp-bin]}" ${email:+"${deb[$email]}"} \
    >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i into $root"; }
if [ -n "$email" ]; then
    "$root$PREFIX/$BINDIR/pmix_info" --parsable 2>&1 | grep -q "^mca:plog:email:" ||
        fail "after dpkg -i $email: pmix_info does not list plog_email"
    dpkg --root="$root" -r "$email" >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -r $email"; }
    out=$("$root$PREFIX/$BINDIR/pmix_info" --parsable 2>&1) || { echo "$out" >&2; fail "pmix_info after dpkg -r"; }
    echo "$out" | grep -q "^mca:plog:email:" && fail "after dpkg -r $email: pmix_info still lists plog_email"
    out=$(timeout 120 "$root$PREFIX/$BINDIR/pmixrun" -n 2 "$root$PREFIX/$EXDIR/hello" 2>"$work/dpkg.err") ||
        { cat "$work/dpkg.err" >&2; fail "after dpkg -r $email: pmixrun -n 2 hello"; }
    grep -Ei 'email|component|warn|error' "$work/dpkg.err" >&2 && fail "after dpkg -r $email: pmixrun said the above"
fi
dpkg --root="$root" -r pmixpp-bin libpmixpp2 >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -r"; }
left=$(find "$root" -mindepth 1 -not -path "$root/var/lib/dpkg*" -type f)
[ -z "$left" ] || fail "dpkg -r left files behind: $left"
echo "dpkg: -i core+bin${email:++email}, -r ${email:-nothing} (gone, no complaint), -r all (nothing left)"

# 8. /etc/ld.so.conf.d
lib=$work/core$PREFIX/$LIBDIR
maps_of_python_pmix='import pmix, sys; sys.stdout.write(open("/proc/self/maps").read())'
if [ -n "$SANITIZE" ]; then
    echo "ld.so.conf.d: skipped (a $SANITIZE build: python3 cannot load a sanitized library unless its runtime comes first)"
elif ! /usr/bin/python3 -c 'import pmix' 2>/dev/null; then
    echo "ld.so.conf.d: skipped (Debian's python3-pmix is not installed)"
elif ! unshare -m true 2>/dev/null; then
    echo "ld.so.conf.d: skipped (no private mount namespace: unshare -m needs root)"
else
    mkdir -p "$work/ld/conf.d"
    echo "$lib" >"$work/ld/conf.d/00-pmixpp.conf"
    cp /etc/ld.so.conf.d/*.conf "$work/ld/conf.d/" 2>/dev/null
    echo "include $work/ld/conf.d/*.conf" >"$work/ld/ld.so.conf"
    ldconfig -X -f "$work/ld/ld.so.conf" -C "$work/ld/ld.so.cache" || fail "ldconfig -C"
    first=$(ldconfig -p -C "$work/ld/ld.so.cache" | awk '$1 == "libpmix.so.2" { print $NF; exit }')
    [ "$first" = "$lib/libpmix.so.2" ] || fail "ld.so.conf.d: the cache's first libpmix.so.2 is $first"
    inside=$(unshare -m sh -c 'mount --bind "$1" /etc/ld.so.cache && exec /usr/bin/python3 -c "$2"' sh \
        "$work/ld/ld.so.cache" "$maps_of_python_pmix" 2>"$work/ld.err") ||
        { cat "$work/ld.err" >&2; fail "ld.so.conf.d: python3-pmix under the new cache"; }
    echo "$inside" | grep -q " $lib/libpmix.so.2$" ||
        { echo "$inside" | grep libpmix >&2; fail "ld.so.conf.d: python3-pmix does not map $lib/libpmix.so.2"; }
    outside=$(/usr/bin/python3 -c "$maps_of_python_pmix" 2>/dev/null)
    echo "$outside" | grep -q " $lib/" && fail "ld.so.conf.d: the machine's own loader cache was changed"
    echo "ld.so.conf.d: with the file, python3-pmix maps ours; without it (going back), Debian's"
fi
echo "PASS"
