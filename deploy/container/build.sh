#!/usr/bin/env bash
# Builds the Langcamp image with no image registry: the binary from a release build, a
# root file system of Debian packages made by mmdebstrap, and deploy/container/Containerfile
# (FROM scratch). Tags it localhost/langcamp:dev (or --tag) and prints its size.
#
#   deploy/container/build.sh [--tag NAME] [--binary PATH]
#
# --binary skips the cargo build and uses that langcamp binary (built for this machine's
# C library or an older one). Otherwise it runs
#
#   cargo build --locked --release -p langcamp-cli
#
# the release build of docs/OPERATIONS.md and docs/BENCHMARKS.md (fat LTO), stripped here.
# A dedicated profile with thin or no LTO was measured and dropped: it built no faster on
# two cores and made a larger, slower binary (docs/OPERATIONS.md, "Containers").
# LANGCAMP_CARGO_PROFILE=NAME builds with another cargo profile.
#
# Needs root (mmdebstrap's root mode keeps the owners in the tarball; podman's storage),
# podman, mmdebstrap and network access to the Debian mirror (DEBIAN_MIRROR, default
# http://deb.debian.org/debian, and DEBIAN_SECURITY_MIRROR for the security updates, which
# the image gets with those of -updates). The Debian release is the build machine's own (its
# VERSION_CODENAME), so the image's C library is the one the binary was linked against;
# DEBIAN_SUITE overrides it. The build context is target/container-image/ (removed after
# the build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

tag="localhost/langcamp:dev"
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    *) echo "usage: $0 [--tag NAME] [--binary PATH]" >&2; exit 2 ;;
  esac
done

log() { echo "container build: $*" >&2; }
for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null || { log "$tool is missing (Debian: apt-get install podman mmdebstrap)"; exit 1; }
done

suite="${DEBIAN_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}"
[ -n "$suite" ] || { log "cannot tell the Debian release of this machine; set DEBIAN_SUITE"; exit 1; }
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# The packages of the root file system; rootfs-hook.sh keeps only their files.
packages="libc6,libgcc-s1,ca-certificates,tzdata,base-files"
# Every file in the image gets this time: the commit's, so a rebuild of the same commit
# gives the same root file system tarball. Exported only after the cargo build: the `cc`
# crate tells cargo to rebuild a build script whose SOURCE_DATE_EPOCH changed (ring's and
# libsqlite3-sys's, as cargo's fingerprint log shows: `EnvVarChanged { name:
# "SOURCE_DATE_EPOCH" }`), and with them everything above them, so a release build made
# without it (CI's own, a developer's) was redone from ring up, fat LTO included.
source_date_epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

# --- the binary --------------------------------------------------------------------------
if [ -z "$binary" ]; then
  profile="${LANGCAMP_CARGO_PROFILE:-release}"
  log "cargo build --locked --profile $profile -p langcamp-cli"
  started=$SECONDS
  env -u SOURCE_DATE_EPOCH cargo build --locked --profile "$profile" -p langcamp-cli
  log "cargo build took $((SECONDS - started)) s"
  dir="$profile"; [ "$profile" = dev ] && dir=debug
  binary="target/$dir/langcamp"
fi
[ -x "$binary" ] || { log "no binary at $binary"; exit 1; }
export SOURCE_DATE_EPOCH="$source_date_epoch"

# What the binary links: each library must be one the root file system has (libssl is
# not there: everything TLS is rustls). A new dependency on a system library stops here.
libs="$(ldd "$binary" | awk '/=>/ {print $1} /^[[:space:]]*\/lib/ {print $1}' | xargs -n1 basename | sort -u)"
log "the binary links: $(echo $libs)"
allowed="ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libgcc_s.so.1 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1"
for lib in $libs; do
  case " $allowed " in
    *" $lib "*) ;;
    *) log "the binary links $lib, which the image does not have: add its package to \$packages and to KEEP in rootfs-hook.sh"; exit 1 ;;
  esac
done

context="target/container-image"
rm -rf "$context"
mkdir -p "$context"
install -m 0755 "$binary" "$context/langcamp"
# Symbols are of no use in the image: 27.2 MB of the release binary become 25.0 MB.
strip --strip-all "$context/langcamp"

# --- the root file system ------------------------------------------------------------------
log "mmdebstrap $suite: $packages"
started=$SECONDS
# extract: unpack the packages, run none of their scripts; the hook keeps only what the
# binary needs. chroot/mount: nothing runs inside, so nothing is mounted there. output/dev:
# no device nodes (the container runtime makes /dev). cleanup: the hook has removed apt's
# and dpkg's files already.
mmdebstrap --quiet --mode=root --variant=extract --format=tar \
  --include="$packages" \
  --skip=chroot/mount,output/dev,cleanup \
  --extract-hook="deploy/container/rootfs-hook.sh \"\$1\"" \
  "$suite" "$context/rootfs.tar" \
  "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security_mirror $suite-security main"
log "root file system: $(du -k "$context/rootfs.tar" | cut -f1) KiB tarball in $((SECONDS - started)) s"

# --- the image -------------------------------------------------------------------------------
old_id="$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
podman build --quiet --pull=never --format oci \
  --timestamp "$SOURCE_DATE_EPOCH" \
  --label org.opencontainers.image.title=langcamp \
  --label org.opencontainers.image.description="Langcamp, the language school's backend" \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.revision="$revision" \
  --label org.opencontainers.image.licenses="MIT OR Apache-2.0" \
  -f deploy/container/Containerfile -t "$tag" "$context" >/dev/null
new_id="$(podman image inspect --format '{{.Id}}' "$tag")"
# The previous build of this tag: remove it when no other tag names it (only it, no
# other image).
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ] \
  && [ "$(podman image inspect --format '{{len .RepoTags}}' "$old_id" 2>/dev/null)" = 0 ]; then
  podman rmi "$old_id" >/dev/null 2>&1 || true
fi
rm -rf "$context"

size="$(podman image inspect --format '{{.Size}}' "$tag")"
echo "$tag ${new_id:0:12}: $(awk -v b="$size" 'BEGIN { printf "%.1f MB (%d bytes)", b / 1e6, b }')"
