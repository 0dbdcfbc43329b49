#!/usr/bin/env bash
# packages.subsets_install_side_by_side: the Debian packages of cmake/Packaging.cmake
# ship real subsets, beside Debian's OpenPMIx.
#
#   subsets.sh CPACK BUILD_DIR PACKAGE_PREFIX LIBDIR BINDIR EXAMPLES_DIR DEBIAN_FILES
#
# 1. `cpack -G DEB` from BUILD_DIR into a temporary directory (one run);
# 2. pmixpp-bin ships pmixrun(1) and pmix_info(1); no file of ours is outside PACKAGE_PREFIX, and none has the path of a file
#    of Debian's libpmix2/libpmix-dev/libpmix-bin/python3-pmix (DEBIAN_FILES plus
#    `dpkg -L` of those installed here);
# 3. each package's ELF files: every NEEDED library is ours (libpmix.so.2, and the
#    package then depends on libpmixpp2) or belongs to a system package named in
#    the package's Depends; only the plog_email package depends on libcurl;
# 4. core + bin unpacked (`dpkg -x`) into a scratch root, LD_LIBRARY_PATH unset:
#    pmix_info lists exactly the core package's components; pmixrun -n 4 hello
#    runs, every rank greets, nothing is said about a missing component;
# 5. the same plus the plog_email package: pmix_info lists plog_email too.
set -u
CPACK=$1 BUILD=$2 PREFIX=$3 LIBDIR=$4 BINDIR=$5 EXDIR=$6 DEBIAN_FILES=$7

fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pmixpp-packages.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH LD_PRELOAD
for v in $(compgen -e | grep '^PMIX_'); do unset "$v"; done

# 1. the packages
(cd "$work" && "$CPACK" -G DEB --config "$BUILD/CPackConfig.cmake" -B "$work/debs") >"$work/cpack.log" 2>&1 ||
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

depends_of() { dpkg-deb -f "${deb[$1]}" Depends; }
files_of() { dpkg-deb --fsys-tarfile "${deb[$1]}" | tar -t | sed 's|^\./|/|' | grep -v '/$'; }

# 2. paths
{ grep -v '^#' "$DEBIAN_FILES"
  for p in libpmix2 libpmix-dev libpmix-bin python3-pmix; do dpkg -L "$p" 2>/dev/null; done; } |
    sort -u >"$work/debian_files"
for p in "${!deb[@]}"; do
    files_of "$p" >"$work/files.$p"
    [ -s "$work/files.$p" ] || fail "$p ships no file"
    outside=$(grep -v "^$PREFIX/" "$work/files.$p")
    [ -z "$outside" ] || fail "$p ships files outside $PREFIX: $outside"
    clash=$(sort -u "$work/files.$p" | comm -12 - "$work/debian_files")
    [ -z "$clash" ] || fail "$p ships files of Debian's OpenPMIx packages: $clash"
done
for page in pmixrun.1 pmix_info.1; do
    grep -q "/man1/$page\(\.gz\)\?$" "$work/files.pmixpp-bin" || fail "pmixpp-bin does not ship the man page $page"
done
echo "paths: all under $PREFIX, none of Debian's OpenPMIx; pmixpp-bin has the man pages"

# 3. NEEDED against Depends
owner_of() {  # system package owning the library at path $1
    local path=$1 real c o
    real=$(realpath "$path")
    for c in "$path" "$real" "${path#/usr}" "${real#/usr}" "/usr${path#/usr}" "/usr${real#/usr}"; do
        o=$(dpkg-query -S "$c" 2>/dev/null | head -1 | sed 's/[:,].*//')
        [ -n "$o" ] && { echo "$o"; return; }
    done
}
mkdir -p "$work/all"
for p in "${!deb[@]}"; do dpkg -x "${deb[$p]}" "$work/all"; done
for p in "${!deb[@]}"; do
    deps=$(depends_of "$p")
    # what this package's own dependencies on our packages bring
    for q in "${!deb[@]}"; do
        [[ ", $deps," == *", $q"[\ ,]* ]] && deps="$deps, $(depends_of "$q")"
    done
    while read -r f; do
        elf=$work/all$f
        file -b "$elf" | grep -q '^ELF' || continue
        while read -r lib; do
            if [ "$lib" = libpmix.so.2 ]; then
                [ "$p" = libpmixpp2 ] || [[ "$deps" == *libpmixpp2* ]] ||
                    fail "$p: $f needs libpmix.so.2 but $p does not depend on libpmixpp2"
                continue
            fi
            path=$(ldd "$elf" | awk -v l="$lib" '{ n = $1; sub(".*/", "", n) } n == l { print ($2 == "=>") ? $3 : $1; exit }')
            [ -n "$path" ] && [ -e "$path" ] || fail "$p: $f: NEEDED $lib not found by ldd"
            sys=$(owner_of "$path")
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
echo "PASS"
