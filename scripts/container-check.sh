#!/usr/bin/env bash
# The container image and the Kubernetes manifests, built and run for real
# (docs/OPERATIONS.md, "Containers"):
#
# 1. the manifests in deploy/kubernetes/ against the Kubernetes schemas
#    (kubernetes-validate --strict, the oldest and the newest version it knows of those we
#    name), checkov's Kubernetes policies on them and its Dockerfile policies on the
#    Containerfile (every skipped check carries its reason in the file), deploy/compose.yaml
#    against the compose specification's schema, and the values that must agree across
#    files (grace period above drain + 30 s, one image reference, the uid);
# 2. deploy/container/build.sh builds the image from this checkout; its size must stay
#    under 40 MB, and it must hold no shell, compiler, package manager or cache, shell
#    history, or key;
# 3. on SQLite, on a named volume, with --read-only: /health and /ready answer, the process
#    runs as uid 10001 with no capability on a read-only root, a user signs in and
#    registers; SIGTERM turns /ready to 503 at once, and the container exits 0 within the
#    grace period; the registration is still there after a restart of the container and
#    in a new container on the same volume;
# 4. on the PostgreSQL test server (a database of its own): two containers, a code asked
#    of one and exchanged at the other, the registration made through one seen through the
#    other; a short mixed load (scripts/rolling-load.py) whose peak resident memory must
#    stay below the Deployment's memory request; both stop on SIGTERM with exit 0.
#
#   scripts/container-check.sh [--binary PATH]
#
# --binary builds the image around that langcamp binary instead of the release build that
# deploy/container/build.sh makes.
#
# Installs on CI (CI=true) what it lacks: podman, runc, mmdebstrap, curl and jq (Debian),
# and kubernetes-validate, checkov and check-jsonschema into a virtualenv (CONTAINER_VENV,
# default target/container-venv). Runs as root. Removes its containers, volumes and
# database; leaves the image localhost/langcamp:dev.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/common.sh
source scripts/lib/container.sh

build_args=()
case "${1:-}" in
  --binary) build_args=(--binary "$2") ;;
  "") ;;
  *) echo "usage: $0 [--binary PATH]" >&2; exit 2 ;;
esac

log() { echo "container-check: $*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

image=localhost/langcamp:dev
uid=10001
max_image_mb=40
venv="${CONTAINER_VENV:-target/container-venv}"
k8s=deploy/kubernetes
# The Kubernetes versions the manifests are validated against: the oldest still commonly
# run, and the newest kubernetes-validate has.
k8s_versions=(1.30.0 1.37.0)
LC_PREFIX="lc-check-$$"
started_at=$SECONDS

# --- 0. tools ----------------------------------------------------------------------------------
missing=()
for tool in podman runc mmdebstrap curl jq; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  install_on_ci container-check "${missing[*]}" "${missing[@]}" \
    || fail "missing: ${missing[*]} (Debian: apt-get install ${missing[*]})"
fi
if [ ! -x "$venv/bin/checkov" ] || [ ! -x "$venv/bin/kubernetes-validate" ] || [ ! -x "$venv/bin/check-jsonschema" ]; then
  log "installing kubernetes-validate, checkov and check-jsonschema into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    'kubernetes-validate==1.37.0' 'checkov==3.3.30' 'check-jsonschema==0.39.0'
fi

work="$(mktemp -d /tmp/langcamp-container-check.XXXXXX)"
database=""
pg_url=""
cleanup() {
  local status=$?
  for c in $(podman ps -a --format '{{.Names}}' 2>/dev/null | grep "^$LC_PREFIX-" || true); do
    pm rm -f -v -t 0 "$c" >/dev/null 2>&1 || true
  done
  for v in $(podman volume ls --format '{{.Name}}' 2>/dev/null | grep "^$LC_PREFIX-" || true); do
    pm volume rm -f "$v" >/dev/null 2>&1 || true
  done
  if [ -n "$database" ]; then psql "$pg_url" -qAtc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# --- 1. the manifests ---------------------------------------------------------------------------
manifests=("$k8s"/*.yaml "$k8s"/base/*.yaml)
for version in "${k8s_versions[@]}"; do
  "$venv/bin/kubernetes-validate" --strict --quiet -k "$version" "${manifests[@]}" \
    || fail "kubernetes-validate --strict -k $version"
done
log "kubernetes-validate --strict: ${#manifests[@]} files valid against Kubernetes ${k8s_versions[*]}"

# checkov finds Dockerfile policies only in files called Dockerfile: it scans a copy.
mkdir -p "$work/checkov/dockerfile"
cp deploy/container/Containerfile "$work/checkov/dockerfile/Dockerfile"
# --skip-download: no Prisma Cloud look-ups (no network here, and none needed).
if ! "$venv/bin/checkov" --skip-download --quiet --compact \
    -d "$k8s" -d "$work/checkov/dockerfile" --framework kubernetes dockerfile \
    >"$work/checkov.txt" 2>&1; then
  cat "$work/checkov.txt" >&2
  fail "checkov: a check failed (fix it, or skip it in the file with the reason)"
fi
grep -E 'scan results|Passed checks' "$work/checkov.txt" | paste - - | sort -u | sed 's/^/container-check: checkov /' >&2
grep -E 'Passed checks' "$work/checkov.txt" | grep -qv 'Failed checks: 0,' && fail "checkov reported a failed check"

"$venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml >/dev/null \
  || fail "deploy/compose.yaml does not follow the compose specification"
log "deploy/compose.yaml follows the compose specification's schema"

# Values that must agree across files.
grace="$(sed -n 's/^ *terminationGracePeriodSeconds: *\([0-9]*\).*/\1/p' "$k8s/deployment.yaml")"
drain="$(sed -n 's/^ *SHUTDOWN_DRAIN: *"\([0-9]*\)s".*/\1/p' "$k8s/base/configmap.yaml")"
[ -n "$grace" ] && [ -n "$drain" ] || fail "cannot read terminationGracePeriodSeconds or SHUTDOWN_DRAIN"
[ "$grace" -gt $((drain + 30)) ] \
  || fail "terminationGracePeriodSeconds ($grace) must be above SHUTDOWN_DRAIN ($drain s) + 30 s in flight"
images="$(grep -h '^ *image:' "$k8s"/*.yaml | sort -u | wc -l)"
[ "$images" -eq 1 ] || fail "deployment.yaml and migrate-job.yaml name different images"
for f in "$k8s/deployment.yaml" "$k8s/migrate-job.yaml"; do
  [ "$(grep -c "runAsUser: $uid" "$f")" -ge 1 ] || fail "$f does not run as uid $uid"
done
request_mi="$(awk '/requests:/ {r=1} r && /memory:/ {gsub(/Mi/, "", $2); print $2; exit}' "$k8s/deployment.yaml")"
limit_mi="$(awk '/limits:/ {l=1} l && /memory:/ {gsub(/Mi/, "", $2); print $2; exit}' "$k8s/deployment.yaml")"
log "grace period ${grace} s > drain ${drain} s + 30 s; one image; uid $uid; memory request ${request_mi}Mi, limit ${limit_mi}Mi"

# --- 2. the image --------------------------------------------------------------------------------
t0=$SECONDS
deploy/container/build.sh --tag "$image" "${build_args[@]}" | tee "$work/build.txt"
build_s=$((SECONDS - t0))
size="$(pm image inspect --format '{{.Size}}' "$image")"
size_mb="$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1e6 }')"
[ "$size" -lt $((max_image_mb * 1000 * 1000)) ] || fail "the image is $size_mb MB, above $max_image_mb MB"

# Its configuration, as the Containerfile says.
config="$(pm image inspect --format '{{json .Config}}' "$image")"
[ "$(jq -r .User <<<"$config")" = "$uid:$uid" ] || fail "the image's user is not $uid:$uid"
jq -e '.Volumes | has("/var/lib/langcamp")' <<<"$config" >/dev/null || fail "no volume /var/lib/langcamp"
jq -e '.ExposedPorts | has("3000/tcp")' <<<"$config" >/dev/null || fail "port 3000 is not exposed"
[ "$(jq -c .Entrypoint <<<"$config")" = '["/usr/local/bin/langcamp"]' ] || fail "the entrypoint is not langcamp"
[ "$(jq -c .Cmd <<<"$config")" = '["serve"]' ] || fail "the command is not serve"

# Its files: nothing to run but the binary, no package manager's leftovers, no secrets.
pm create --name "$LC_PREFIX-files" "$image" >/dev/null
pm export "$LC_PREFIX-files" >"$work/image.tar"
pm rm -v "$LC_PREFIX-files" >/dev/null
tar -tvf "$work/image.tar" >"$work/image-files.txt"
tar -tf "$work/image.tar" | sed 's#^\./##' >"$work/image-names.txt"
forbidden='^(usr/)?s?bin/|(^|/)(sh|bash|dash|ash|busybox|gcc[^/]*|cc|c\+\+|ld|rustc|cargo|apt[^/]*|dpkg|perl[^/]*|python[^/]*|openssl)$|^var/cache/apt|^var/lib/apt|^etc/apt|^var/lib/dpkg/(status|info)($|/)|(^|/)\.[a-z]*_history$|(^|/)\.(env|netrc|git|ssh|aws|docker)(/|$)|(^|/)id_(rsa|ed25519|ecdsa)|\.(key|p12|pfx)$|^root/.'
if grep -E "$forbidden" "$work/image-names.txt" >"$work/forbidden.txt"; then
  cat "$work/forbidden.txt" >&2
  fail "the image holds files it must not"
fi
executables="$(awk '$1 ~ /^-..x/ {print $6}' "$work/image-files.txt" | sed 's#^\./##' | grep -v -E '^(usr/)?lib(64)?/' || true)"
[ "$executables" = "usr/local/bin/langcamp" ] || fail "executables besides the binary: $executables"
tar -xOf "$work/image.tar" --wildcards --exclude='usr/local/bin/*' --exclude='./usr/local/bin/*' 2>/dev/null \
  | grep -a -q -E -- '-----BEGIN ([A-Z]+ )?PRIVATE KEY-----' && fail "the image holds a private key"
log "image $image: $size_mb MB, $(wc -l <"$work/image-names.txt") entries, the binary the one executable; built in ${build_s} s"

# --- 3. SQLite on a volume, read-only --------------------------------------------------------------
secret="container-check-secret-$$-$RANDOM-0123456789"
port="$(free_port)"
vol="$LC_PREFIX-data"
pm volume create "$vol" >/dev/null
run_sqlite() {  # run_sqlite NAME: a container on the volume, serving on $port
  pm run -d --name "$1" "${PODMAN_RUN[@]}" --network host \
    --read-only --read-only-tmpfs=false --tmpfs /tmp:rw,size=64m,mode=1777 \
    --cap-drop all --security-opt no-new-privileges \
    -v "$vol:/var/lib/langcamp" \
    -e HOST=127.0.0.1 -e PORT="$port" -e JWT_SECRET="$secret" -e RUST_LOG=info,sqlx=warn \
    "$image" >/dev/null
}
c1="$LC_PREFIX-sqlite"
run_sqlite "$c1"
wait_ready "$c1" "$port"
[ "$(http_status "http://127.0.0.1:$port/health")" = 200 ] || fail "/health did not answer 200"
pid="$(host_pid "$c1")"
ids="$(awk '/^(Uid|Gid):/ {print $2, $3, $4, $5}' "/proc/$pid/status" | tr '\n' ' ')"
[ "$ids" = "$uid $uid $uid $uid $uid $uid $uid $uid " ] || fail "the process's uids and gids are $ids, not $uid"
[ "$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status")" = 0000000000000000 ] || fail "the process has capabilities"
root_opts="$(awk '$5 == "/" {print $6}' "/proc/$pid/mountinfo")"
[[ ",$root_opts," == *,ro,* ]] || fail "the root file system is mounted $root_opts, not read-only"
[ "$(pm inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$c1")" = true ] || fail "podman does not run it read-only"
# No shell to exec into: the image has none.
if pm exec "$c1" /bin/sh -c true >/dev/null 2>&1; then fail "a shell ran inside the container"; fi
data="$(volume_dir "$vol")"
[ "$(stat -c %u "$data/langcamp.db")" = "$uid" ] || fail "the SQLite file is not on the volume, owned by $uid"
log "SQLite: /health and /ready 200; uid/gid $uid, no capabilities, root mounted ro, no shell; the database on the volume"

token="$(sign_in "$port" ana@example.com "$data/mail")" || fail "sign-in on SQLite"
register "$port" "$token" "Ana Container" || fail "complete-registration on SQLite"
[ "$(me "$port" "$token" | jq -r .data.name)" = "Ana Container" ] || fail "/me does not answer the registration"

# SIGTERM: /ready turns 503 at once while /health stays 200 (the drain), then exit 0.
stop_with_sigterm() {  # stop_with_sigterm NAME PORT: checks the drain; prints the seconds taken
  local name="$1" port="$2" t_start ready health code
  t_start="$(date +%s.%N)"
  pm kill --signal TERM "$name" >/dev/null
  sleep 0.5
  ready="$(http_status "http://127.0.0.1:$port/ready")"
  health="$(http_status "http://127.0.0.1:$port/health")"
  [ "$ready" = 503 ] && [ "$health" = 200 ] \
    || fail "$name: during the drain /ready answered $ready and /health $health (want 503 and 200)"
  code="$(timeout "$grace" podman wait "$name" || echo timeout)"
  [ "$code" = 0 ] || fail "$name: exit code $code after SIGTERM (want 0 within the $grace s grace period)"
  python3 -c "import time; print(f'{time.time() - $t_start:.1f}')"
}
took="$(stop_with_sigterm "$c1" "$port")"
log "SIGTERM: /ready 503 and /health 200 during the drain, exit 0 after $took s (grace period $grace s)"

pm start "$c1" >/dev/null
wait_ready "$c1" "$port"
[ "$(me "$port" "$token" | jq -r .data.name)" = "Ana Container" ] || fail "the registration is gone after a restart"
pm stop -t "$grace" "$c1" >/dev/null
[ "$(pm inspect --format '{{.State.ExitCode}}' "$c1")" = 0 ] || fail "podman stop: exit code not 0"
pm rm "$c1" >/dev/null
c2="$LC_PREFIX-sqlite-new"
run_sqlite "$c2"
wait_ready "$c2" "$port"
[ "$(me "$port" "$token" | jq -r .data.name)" = "Ana Container" ] || fail "a new container on the volume lost the registration"
pm stop -t "$grace" "$c2" >/dev/null
log "SQLite: the registration survives a restart of the container and a new container on the same volume"

# --- 4. two containers on PostgreSQL --------------------------------------------------------------
pg_url="$(scripts/postgres-test-server.sh)"
database="lc_container_$$"
psql "$pg_url" -qAtc "CREATE DATABASE $database" >/dev/null
db_url="${pg_url%/*}/$database"
pm run --rm --name "$LC_PREFIX-migrate" "${PODMAN_RUN[@]}" --network host --read-only \
  --cap-drop all -e DATABASE_URL="$db_url" "$image" migrate >"$work/migrate.txt" 2>&1 \
  || { cat "$work/migrate.txt" >&2; fail "langcamp migrate in a container"; }
pm run --rm --name "$LC_PREFIX-seed" "${PODMAN_RUN[@]}" --network host --read-only \
  --cap-drop all -e DATABASE_URL="$db_url" "$image" seed --demo >"$work/seed.txt" 2>&1 \
  || { cat "$work/seed.txt" >&2; fail "langcamp seed --demo in a container"; }
declare -A stopping=()
declare -A pg_port=([a]="$(free_port)" [b]="$(free_port)")
for name in a b; do
  pm volume create "$LC_PREFIX-pg-$name" >/dev/null
  pm run -d --name "$LC_PREFIX-pg-$name" "${PODMAN_RUN[@]}" --network host \
    --read-only --read-only-tmpfs=false --tmpfs /tmp:rw,size=64m,mode=1777 \
    --cap-drop all --security-opt no-new-privileges \
    -v "$LC_PREFIX-pg-$name:/var/lib/langcamp" \
    -e HOST=127.0.0.1 -e PORT="${pg_port[$name]}" -e DATABASE_URL="$db_url" -e JWT_SECRET="$secret" \
    -e TRUSTED_PROXIES=127.0.0.0/8 -e RUST_LOG=info,sqlx=warn \
    "$image" >/dev/null
done
for name in a b; do wait_ready "$LC_PREFIX-pg-$name" "${pg_port[$name]}"; done
mail_a="$(volume_dir "$LC_PREFIX-pg-a")/mail"
mail_b="$(volume_dir "$LC_PREFIX-pg-b")/mail"
# Asked of a, exchanged at b: the code lives in the shared database.
token="$(sign_in "${pg_port[a]}" bea@example.com "$mail_a" "$mail_b")" || fail "sign-in across the two containers"
[ "$(me "${pg_port[b]}" "$token" | jq -r .data.email)" = bea@example.com ] || fail "b does not know the user that a signed in"
register "${pg_port[a]}" "$token" "Bea Container" || fail "complete-registration through a"
[ "$(me "${pg_port[b]}" "$token" | jq -r .data.name)" = "Bea Container" ] || fail "b does not serve the registration made through a"
log "PostgreSQL: two containers on one database; the code asked of one is taken by the other, and b serves what a wrote"

# A short mixed load on a: signed-in reads, submissions and sign-ins. Its peak resident
# memory must stay below the Deployment's memory request (docs/OPERATIONS.md has the longer
# measurement the request comes from).
pid_a="$(host_pid "$LC_PREFIX-pg-a")"
echo 5 >"/proc/$pid_a/clear_refs" 2>/dev/null || true
python3 scripts/rolling-load.py --port "${pg_port[a]}" --run "container$$" \
  --mail-dir "$mail_a" --mail-dir "$mail_b" --users 8 --readers 4 --submitters 2 --signers 1 \
  --max-seconds 15 --out "$work/load.json" 2>"$work/load.log" \
  || { tail -n 20 "$work/load.log" >&2; fail "the load client failed"; }
failures="$(jq .failed "$work/load.json")"
requests="$(jq .requests "$work/load.json")"
[ "$failures" = 0 ] || { jq '.failures[:5]' "$work/load.json" >&2; fail "$failures failed requests under load"; }
peak_kib="$(peak_rss_kib "$pid_a")"
[ "$peak_kib" -lt $((request_mi * 1024)) ] \
  || fail "peak RSS $((peak_kib / 1024)) MiB under load is above the memory request ${request_mi}Mi"
log "load: $requests requests, 0 failed; peak RSS $((peak_kib / 1024)) MiB (request ${request_mi}Mi, limit ${limit_mi}Mi)"

# Both at once, as a node drain would.
for name in a b; do
  stop_with_sigterm "$LC_PREFIX-pg-$name" "${pg_port[$name]}" >"$work/stop-$name.txt" &
  stopping[$name]=$!
done
for name in a b; do
  wait "${stopping[$name]}" || fail "container $name did not stop cleanly on SIGTERM"
done
log "PostgreSQL: both containers stopped on SIGTERM with exit 0, after $(cat "$work/stop-a.txt") and $(cat "$work/stop-b.txt") s"

log "all passed in $((SECONDS - started_at)) s (image $size_mb MB, built in ${build_s} s)"
