#!/usr/bin/env bash
# The systemd unit deploy/langcamp.service is valid, hardened and actually runs the service:
#
# 1. `systemd-analyze verify` on the unit, with its ExecStart pointed at the built binary and
#    its Documentation=man:langcamp(1) resolved against the page `langcamp man` prints;
# 2. `systemd-analyze security --offline=true` prints the exposure table, and the check
#    fails when the overall exposure is above 2.0;
# 3. as root: a throwaway systemd runs as PID 1 of private PID and mount namespaces (its
#    own /run, /var/lib, /var/log and /usr/local/bin on tmpfs, only a few stub targets,
#    journald and D-Bus as units), starts the unit unchanged (the binary copied to
#    /usr/local/bin/langcamp; a drop-in only picks the port and a metrics token), and the
#    check asks /health, /ready and /metrics, requests a sign-in code (its mail must land in
#    the state directory), runs operator commands as the service's user the way
#    docs/OPERATIONS.md says, and stops the unit, which must end cleanly. The host's own
#    /var/lib, /run and services are never touched.
#
#   scripts/systemd-check.sh [path/to/langcamp]     (default: target/debug/langcamp)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$(realpath "${1:-target/debug/langcamp}")"
unit=deploy/langcamp.service
# 2.0 on systemd-analyze's scale of 0 to 10; --threshold counts in tenths.
max_exposure_tenths=20

# Debian packages: systemd (systemd-analyze, systemd itself, journald, systemd-run), man-db
# (verify resolves man:langcamp(1)), dbus (systemd-run talks to systemd over D-Bus), curl.
missing=()
command -v systemd-analyze >/dev/null && [ -x /lib/systemd/systemd ] || missing+=(systemd)
command -v man >/dev/null || missing+=(man-db)
command -v dbus-daemon >/dev/null || missing+=(dbus)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} (Debian packages)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") >/dev/null
fi

work="$(mktemp -d)"
ns_init=""
unshare_pid=""
cgroups=()
cleanup() {
  if [ -n "$ns_init" ]; then
    # SIGKILL to a PID namespace's init ends every process in it; its mounts go with it.
    kill -KILL "$ns_init" 2>/dev/null || true
    wait "$unshare_pid" 2>/dev/null || true
  fi
  for cgroup in "${cgroups[@]}"; do
    [ -d "$cgroup" ] && find "$cgroup" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# --- 1. verify -------------------------------------------------------------------------
mkdir -p "$work/man/man1" "$work/verify"
"$bin" man >"$work/man/man1/langcamp.1"
sed "s#^ExecStart=/usr/local/bin/langcamp #ExecStart=$bin #" "$unit" >"$work/verify/langcamp.service"
grep -q "^ExecStart=$bin serve$" "$work/verify/langcamp.service" \
  || { echo "$unit: expected ExecStart=/usr/local/bin/langcamp serve" >&2; exit 1; }
# verify exits 0 on warnings; any line it prints is a finding.
if ! MANPATH="$work/man" systemd-analyze verify "$work/verify/langcamp.service" >"$work/verify.txt" 2>&1 \
  || [ -s "$work/verify.txt" ]; then
  echo "systemd-analyze verify $unit:" >&2
  cat "$work/verify.txt" >&2
  exit 1
fi
echo "systemd-analyze verify: $unit passes"

# --- 2. security -----------------------------------------------------------------------
status=0
systemd-analyze security --no-pager --offline=true --threshold="$max_exposure_tenths" "$unit" \
  >"$work/security.txt" 2>&1 || status=$?
cat "$work/security.txt"
exposure="$(grep -o 'Overall exposure level for langcamp.service: [0-9.]*' "$work/security.txt" | grep -o '[0-9.]*$' || true)"
if [ -z "$exposure" ] || [ "$status" -ne 0 ]; then
  echo "systemd-analyze security: exposure ${exposure:-unknown} is above 2.0 (or the analysis failed)" >&2
  exit 1
fi
echo "systemd-analyze security: exposure $exposure (at most 2.0)"

# --- 3. start it under systemd -----------------------------------------------------------
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null \
  || [ ! -x /lib/systemd/systemd ]; then
  echo "systemd check: NOT started under systemd (needs root, unshare, nsenter and /lib/systemd/systemd)"
  exit 0
fi

units="$work/units"
mkdir -p "$units/langcamp.service.d"
for target in sysinit basic shutdown network network-online multi-user; do
  printf '[Unit]\nDescription=%s (stub of the langcamp check)\n' "$target" >"$units/$target.target"
done
# journald for the service's log; D-Bus for systemd-run.
printf '[Unit]\nDescription=The langcamp check\nWants=systemd-journald.socket systemd-journald-dev-log.socket systemd-journald.service dbus.socket dbus.service\n' \
  >"$units/langcamp-check.target"
for needed in systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket \
  systemd-journald-audit.socket dbus.socket dbus.service; do
  cp "/lib/systemd/system/$needed" "$units/"
done
cp "$unit" "$units/langcamp.service"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
token="systemd-check-$$"
printf '[Service]\nEnvironment=HOST=127.0.0.1 PORT=%s METRICS_TOKEN=%s\n' "$port" "$token" \
  >"$units/langcamp.service.d/check.conf"

# systemd takes its own cgroup as the root of what it manages: give it a fresh one.
if [ -d /sys/fs/cgroup/systemd ]; then
  cgroups=("/sys/fs/cgroup/systemd/langcamp-check-$$")
  [ -d /sys/fs/cgroup/unified ] && cgroups+=("/sys/fs/cgroup/unified/langcamp-check-$$")
else
  cgroups=("/sys/fs/cgroup/langcamp-check-$$")
fi
cat >"$work/init.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
for cgroup in ${cgroups[*]}; do mkdir -p "\$cgroup"; echo \$\$ >"\$cgroup/cgroup.procs"; done
for dir in /run /var/lib /var/log /usr/local/bin; do mount -t tmpfs tmpfs "\$dir"; done
cp "$bin" /usr/local/bin/langcamp
export SYSTEMD_UNIT_PATH="$units" container=langcamp-check
exec /lib/systemd/systemd --system --unit=langcamp-check.target --log-target=journal
EOF
chmod +x "$work/init.sh"
unshare --pid --fork --mount --mount-proc "$work/init.sh" </dev/null >"$work/boot.log" 2>&1 &
unshare_pid=$!
for _ in $(seq 1 100); do
  ns_init="$(cat "/proc/$unshare_pid/task/$unshare_pid/children" 2>/dev/null | awk '{print $1}')"
  [ -n "$ns_init" ] && break
  sleep 0.1
done
[ -n "$ns_init" ] || { echo "systemd check: the namespace did not start" >&2; cat "$work/boot.log" >&2; exit 1; }
inside() { nsenter -t "$ns_init" -m -p "$@"; }
fail() {
  echo "systemd check: $*" >&2
  cat "$work/boot.log" >&2
  inside journalctl --no-pager -n 100 >&2 || true
  exit 1
}
state=""
for _ in $(seq 1 300); do
  state="$(inside systemctl is-system-running 2>/dev/null || true)"
  [ "$state" = running ] && break
  sleep 0.1
done
[ "$state" = running ] || fail "the namespace's systemd is '$state', not running"

inside systemctl start langcamp.service || fail "systemctl start langcamp failed"
base="http://127.0.0.1:$port"
for _ in $(seq 1 300); do curl -sf "$base/health" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health" >/dev/null || fail "no answer on $base/health"
ready="$(curl -s "$base/ready")"
grep -q '"status":"ready"' <<<"$ready" || fail "/ready: $ready"
metrics="$(curl -sf "$base/metrics" -H "authorization: Bearer $token" || true)"
grep -q '^process_resident_memory_bytes ' <<<"$metrics" \
  || fail "/metrics lacks process_resident_memory_bytes (is /proc/self/status readable?)"
curl -sf "$base/auth/otp/request" -H 'content-type: application/json' -d '{"email":"ops@example.com"}' >/dev/null \
  || fail "a sign-in code request failed"
mail=""
for _ in $(seq 1 100); do
  mail="$(inside sh -c 'ls /var/lib/langcamp/mail/*.eml 2>/dev/null' || true)"
  [ -n "$mail" ] && break
  sleep 0.1
done
[ -n "$mail" ] || fail "no mail written under the state directory /var/lib/langcamp/mail"
main_pid="$(inside systemctl show -p MainPID --value langcamp.service)"
uid="$(inside stat -c %u "/proc/$main_pid")"
[ -n "$uid" ] && [ "$uid" -ne 0 ] || fail "the service runs as uid '$uid', not as its dynamic user"
# docs/OPERATIONS.md's way to run an operator command on the live state: as the
# service's own dynamic user, so nothing in /var/lib/langcamp ends up owned by root.
as_service() {
  inside systemd-run --quiet --pipe --wait --collect --property=DynamicUser=yes --property=User=langcamp \
    --property=StateDirectory=langcamp --property=EnvironmentFile=-/etc/langcamp/langcamp.env \
    --setenv=DATA_DIR=/var/lib/langcamp /usr/local/bin/langcamp "$@"
}
as_service users create head@example.com --role superadmin --name Head --json >/dev/null \
  || fail "an operator command as the service's user failed"
owners="$(as_service stats check --json && inside find /var/lib/private/langcamp ! -uid "$uid")"
grep -q '"drift": \[\]' <<<"$owners" || fail "stats check as the service's user: $owners"
grep -q '^/' <<<"$owners" && fail "files in the state directory not owned by the service: $owners"
as_service backup /var/lib/langcamp/langcamp-check.db >/dev/null \
  && inside test -s /var/lib/private/langcamp/langcamp-check.db \
  || fail "a backup into the state directory as the service's user failed"
inside systemctl stop langcamp.service
result="$(inside systemctl show -p Result --value langcamp.service)"
code="$(inside systemctl show -p ExecMainStatus --value langcamp.service)"
[ "$result" = success ] && [ "$code" = 0 ] || fail "stopping ended with result '$result', exit code '$code'"
journal="$(inside journalctl -u langcamp.service -o cat --no-pager)"
grep -q 'stopped' <<<"$journal" || fail "the journal lacks the service's last line 'stopped'"
echo "systemd check: started the unit under systemd (as uid $uid); /health, /ready, /metrics and a sign-in answered, its mail is in /var/lib/langcamp, operator commands ran as its user, and SIGTERM stopped it with exit code 0"
