#!/usr/bin/env bash
# install.runs_on_its_own: an installation works by itself, with the system's
# libpmix.so.2 (Debian's OpenPMIx, libpmix2) installed and LD_LIBRARY_PATH unset.
#
#   runs_on_its_own.sh CMAKE BUILD_DIR LIBDIR BINDIR EXAMPLES_DIR
#     LIBDIR, BINDIR, EXAMPLES_DIR: install directories relative to the prefix
#     (lib, bin, libexec/pmixpp); EXAMPLES_DIR holds hello and where_loaded.
#
# 1. `cmake --install BUILD_DIR --prefix <fresh temporary prefix>`, plus the
#    test-only component (where_loaded);
# 2. ldd: the programs and components resolve libpmix.so.2 to <prefix>/LIBDIR;
# 3. <prefix>/bin/pmix_info --all exits 0 and lists every installed component
#    from <prefix>/LIBDIR/pmix;
# 4. <prefix>/bin/pmixrun -n 2 hello: both ranks greet;
# 5. <prefix>/bin/pmixrun -n 2 where_loaded: in /proc/<pid>/maps of each client
#    and of pmixrun, every libpmix.so*/pmix_mca_* file is the prefix's;
# 6. the prefix moved elsewhere (the RUNPATH is $ORIGIN-relative): 2 and 3 again.
set -u
CMAKE=$1 BUILD=$2 LIBDIR=$3 BINDIR=$4 EXDIR=$5

fail() { echo "FAIL: $*" >&2; exit 1; }
for d in "$LIBDIR" "$BINDIR" "$EXDIR"; do
    case $d in /*) fail "install directory $d is absolute: this test needs prefix-relative ones" ;; esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/pmixpp-install.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
work=$(realpath "$work")
prefix=$work/prefix

# Nothing from the caller's environment may point at a library or a server.
unset LD_LIBRARY_PATH LD_PRELOAD
for v in $(compgen -e | grep '^PMIX_'); do unset "$v"; done

"$CMAKE" --install "$BUILD" --prefix "$prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; fail "cmake --install"; }
"$CMAKE" --install "$BUILD" --prefix "$prefix" --component pmixpp_install_test \
    >>"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "cmake --install (test component)"; }

# check_prefix <prefix>: steps 2 and 3 against the installation at <prefix>.
check_prefix() {
    local p=$1 lib=$1/$LIBDIR
    local programs=("$p/$BINDIR/pmix_info" "$p/$BINDIR/pmixrun" "$p/$EXDIR/where_loaded")
    programs+=("$p/$BINDIR/pmix_ps")  # tools (issue 15): the status tool is installed too
    [ -x "$p/$EXDIR/hello" ] && programs+=("$p/$EXDIR/hello")
    local components=("$lib"/pmix/pmix_mca_*.so)
    [ -e "${components[0]}" ] || fail "no component installed in $lib/pmix"
    local f resolved
    for f in "${programs[@]}" "${components[@]}"; do
        [ -e "$f" ] || fail "$f not installed"
        resolved=$(ldd "$f" | awk '$1 == "libpmix.so.2" { print $3 }')
        [ -n "$resolved" ] || { ldd "$f" >&2; fail "ldd $f: no libpmix.so.2"; }
        [ "$(realpath "$resolved")" = "$(realpath "$lib/libpmix.so.2")" ] ||
            { ldd "$f" >&2; fail "ldd $f: libpmix.so.2 => $resolved, not the prefix's $lib/libpmix.so.2"; }
    done
    echo "ldd: ${#programs[@]} programs and ${#components[@]} components use $lib/libpmix.so.2"

    local out
    out=$("$p/$BINDIR/pmix_info" --all 2>&1)
    rc=$?
    [ $rc -eq 0 ] || { echo "$out" >&2; fail "$p/$BINDIR/pmix_info --all exited $rc"; }
    for f in "${components[@]}"; do
        grep -qF "$f" <<<"$out" || { echo "$out" >&2; fail "pmix_info --all does not list $f"; }
    done
    if grep -qF "$BUILD/" <<<"$out"; then
        echo "$out" >&2; fail "pmix_info --all names the build tree $BUILD"
    fi
    echo "pmix_info --all: lists the ${#components[@]} components of $lib/pmix"
}

check_prefix "$prefix"

if [ -x "$prefix/$EXDIR/hello" ]; then
    out=$(timeout 60 "$prefix/$BINDIR/pmixrun" -n 2 "$prefix/$EXDIR/hello" 2>&1)
    rc=$?
    [ $rc -eq 0 ] || { echo "$out" >&2; fail "pmixrun -n 2 hello exited $rc"; }
    for r in 0 1; do
        grep -q "^hello from rank $r of 2 .*read 2 greetings" <<<"$out" ||
            { echo "$out" >&2; fail "pmixrun -n 2 hello: no greeting from rank $r"; }
    done
    echo "pmixrun -n 2 hello: both ranks greeted"
fi

out=$(timeout 60 "$prefix/$BINDIR/pmixrun" -n 2 "$prefix/$EXDIR/where_loaded" 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out" >&2; fail "pmixrun -n 2 where_loaded exited $rc"; }
mine=$(realpath "$prefix/$LIBDIR/libpmix.so.2")
for r in 0 1; do
    for who in self server; do
        files=$(awk -v r="$r" -v w="$who" '$1 == "where_loaded:" && $3 == r && $4 == w { print $5 }' <<<"$out")
        grep -qxF "$mine" <<<"$files" ||
            { echo "$out" >&2; fail "rank $r: the $who process has not mapped $mine"; }
        while read -r f; do
            case $(realpath "$f") in
                "$prefix"/*) ;;
                *) echo "$out" >&2; fail "rank $r: the $who process has mapped $f, outside $prefix" ;;
            esac
        done <<<"$files"
    done
done
echo "pmixrun -n 2 where_loaded: clients and server map only $prefix's libpmix and components"
grep "version" <<<"$out" | head -1

# Relocation: the same tree under another name.
moved=$work/moved
mv "$prefix" "$moved"
check_prefix "$moved"
echo "PASS"
