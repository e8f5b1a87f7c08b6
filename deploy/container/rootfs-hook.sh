#!/bin/sh
# mmdebstrap's extract hook for the image's root file system (deploy/container/build.sh):
#
#   mmdebstrap --variant=extract --include=$PACKAGES --extract-hook='rootfs-hook.sh "$1"' ...
#
# The extract variant unpacks the listed packages *and their dependencies* (ca-certificates
# pulls in openssl, libssl3 and debconf, which needs perl) without running any maintainer
# script. This hook, run on the host with the unpacked tree as $1 while the .deb files are
# still in its apt cache, keeps only the files of the packages in KEEP, drops their
# documentation, manual pages, translations and iconv modules, and writes what the
# maintainer scripts would have (the CA bundle, /etc/localtime) plus the few files a
# container needs (the service's user, an empty /etc/hosts to bind over, the dpkg status a
# vulnerability scanner reads). Everything else goes: apt, dpkg, debconf, openssl, perl,
# the apt lists and cache, the host's /etc/resolv.conf and /etc/hostname. There is no shell.
set -eu

root="$1"
# The packages whose files the image keeps: the C library and libgcc_s (what `ldd` lists
# for the binary), the CA certificates (S3 and SMTP over TLS with the system's roots),
# the time zone data, and os-release from base-files (how scanners tell the distribution).
KEEP="libc6 libgcc-s1 ca-certificates tzdata base-files"
UID_GID=10001
archives="$root/var/cache/apt/archives"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

deb_of() {
    set -- "$archives/$1"_*.deb
    [ -f "$1" ] || { echo "rootfs-hook: no .deb for a kept package in $archives" >&2; exit 1; }
    echo "$1"
}

# --- 1. the files to keep: those of the KEEP packages, less what nothing here reads ------
: >"$work/keep"
for pkg in $KEEP; do
    dpkg-deb --fsys-tarfile "$(deb_of "$pkg")" | tar -t >>"$work/keep"
done
grep -v -E '/$' "$work/keep" \
    | grep -v -E '^\./usr/share/(doc|man|lintian|locale|bug|info|base-files|common-licenses)/' \
    | grep -v -E '^\./usr/lib/x86_64-linux-gnu/gconv/' \
    | grep -v -E '^\./usr/sbin/' \
    | grep -v -E '^\./etc/ca-certificates' \
    | grep -v -E '^\./usr/share/zoneinfo/right/' \
    | sed -E 's#/$##' | LC_ALL=C sort -u >"$work/keep.files"
# base-files: only the distribution's identity, not its skeleton /etc (profile, motd, ...).
dpkg-deb --fsys-tarfile "$(deb_of base-files)" | tar -t | grep -v '/$' | LC_ALL=C sort -u >"$work/base-files"
LC_ALL=C comm -23 "$work/keep.files" "$work/base-files" >"$work/keep.tmp"
printf '%s\n' ./etc/debian_version ./usr/lib/os-release ./etc/os-release >>"$work/keep.tmp"
LC_ALL=C sort -u "$work/keep.tmp" >"$work/keep.files"

# One dpkg status file per kept package, the way distroless images record them, so that a
# vulnerability scanner (trivy, grype) knows the packages and versions in the image.
mkdir -p "$work/status.d"
for pkg in $KEEP; do
    { dpkg-deb -f "$(deb_of "$pkg")"; echo "Status: install ok installed"; } \
        >"$work/status.d/$pkg"
done

# --- 2. delete everything else ---------------------------------------------------------------
# build.sh runs mmdebstrap with --skip=chroot/mount (nothing runs in this tree, so nothing
# is mounted) and --skip=output/dev (no device nodes in the tarball); to be safe anyway,
# this never leaves the tree's own file system (-xdev) and never looks into dev, proc, sys.
for mnt in dev proc sys; do
    if mountpoint -q "$root/$mnt" 2>/dev/null || grep -q " $root/$mnt" /proc/mounts; then
        echo "rootfs-hook: $root/$mnt is mounted; run mmdebstrap with --skip=chroot/mount" >&2
        exit 1
    fi
done
(cd "$root" && find . -xdev \( -path ./dev -o -path ./proc -o -path ./sys \) -prune -o ! -type d -print \
    | LC_ALL=C sort) >"$work/all"
LC_ALL=C comm -23 "$work/all" "$work/keep.files" >"$work/drop"
(cd "$root" && tr '\n' '\0' <"$work/drop" | xargs -0 -r rm -f --)
find "$root" -xdev -mindepth 1 -type d -empty \
    ! -path "$root/dev" ! -path "$root/proc" ! -path "$root/sys" -delete

# --- 3. what the maintainer scripts would have written, and what a container needs ---------
# The CA bundle, as update-ca-certificates writes it (every Mozilla certificate, each
# ending in a newline); rustls-native-certs finds it at this path through openssl-probe.
mkdir -p "$root/etc/ssl/certs"
find "$root/usr/share/ca-certificates" -name '*.crt' | LC_ALL=C sort | while IFS= read -r crt; do
    sed -e '$a\' "$crt"
done >"$root/etc/ssl/certs/ca-certificates.crt"
[ -s "$root/etc/ssl/certs/ca-certificates.crt" ] || { echo "rootfs-hook: empty CA bundle" >&2; exit 1; }
rm -rf "$root/usr/share/ca-certificates"

# UTC, as tzdata's postinst would set without a debconf answer; TZ= picks another zone.
ln -sf ../usr/share/zoneinfo/Etc/UTC "$root/etc/localtime"
echo Etc/UTC >"$root/etc/timezone"

# The service's user: a fixed uid/gid above any host range, no shell, no password.
printf 'root:x:0:0:root:/root:/nonexistent\nlangcamp:x:%s:%s:Langcamp:/var/lib/langcamp:/nonexistent\n' \
    "$UID_GID" "$UID_GID" >"$root/etc/passwd"
printf 'root:x:0:\nlangcamp:x:%s:\n' "$UID_GID" >"$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
# Mount points the runtime binds its own files over (podman and the kubelet do); empty here,
# so nothing of the build host's resolver or name is left in the image.
: >"$root/etc/hosts"
: >"$root/etc/resolv.conf"
: >"$root/etc/hostname"

# The data volume, owned by the service's user: a new named volume (podman, Docker)
# starts with this owner and mode.
install -d -m 0700 -o "$UID_GID" -g "$UID_GID" "$root/var/lib/langcamp"
install -d -m 1777 "$root/tmp"
install -d -m 0755 "$root/usr/local/bin"

mkdir -p "$root/var/lib/dpkg"
cp -r "$work/status.d" "$root/var/lib/dpkg/status.d"
chmod 0755 "$root/var/lib/dpkg/status.d"
chmod 0644 "$root"/var/lib/dpkg/status.d/*

# The dynamic loader's cache, so the binary's libraries are found without a search.
ldconfig -r "$root"
rm -rf "$root/var/cache/ldconfig"
