# Helpers of scripts/container-check.sh and scripts/container-rss.sh; source it, do not
# run it. Every container they start is named "$LC_PREFIX-..." and every volume too, so the
# cleanup removes theirs and nothing else.

# Podman on these machines: runc rather than crun (which needs a cgroup setup they lack),
# cgroupfs rather than systemd, and explicit limits, since the default ones are above what
# an unprivileged runtime may set here (the machine lacks CAP_SYS_RESOURCE). Nothing is
# ever pulled: the image is built locally and no registry is reachable.
PODMAN_GLOBAL=(--runtime runc --cgroup-manager cgroupfs)
PODMAN_RUN=(--pull never --log-driver k8s-file --ulimit nofile=16384:16384 --ulimit nproc=4096:4096)
pm() { podman "${PODMAN_GLOBAL[@]}" "$@"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# http_status URL: the status code of a GET (000 when nothing answers).
http_status() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$1" || true; }

# wait_ready NAME PORT: until the container's /ready answers 200 (60 s at most).
wait_ready() {
  local name="$1" port="$2"
  for _ in $(seq 1 300); do
    [ "$(http_status "http://127.0.0.1:$port/ready")" = 200 ] && return 0
    if [ "$(pm inspect --format '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
      echo "container $name stopped before it was ready:" >&2
      pm logs "$name" 2>&1 | tail -n 30 >&2
      return 1
    fi
    sleep 0.2
  done
  echo "container $name was not ready within 60 s:" >&2
  pm logs "$name" 2>&1 | tail -n 30 >&2
  return 1
}

# host_pid NAME: the container's main process as the host sees it.
host_pid() { pm inspect --format '{{.State.Pid}}' "$1"; }

# volume_dir VOLUME: where a named volume's files are on the host.
volume_dir() { pm volume inspect --format '{{.Mountpoint}}' "$1"; }

# sign_in PORT EMAIL MAILDIR...: asks the instance on PORT for a sign-in code, reads it from
# the newest mail to EMAIL in the MAILDIRs (each a DATA_DIR/mail of an instance: with
# PostgreSQL, whichever instance's mail worker claims it delivers it), exchanges it and
# prints the access token.
sign_in() {
  local port="$1" email="$2"
  shift 2
  curl -sf -m 10 "http://127.0.0.1:$port/auth/otp/request" -H 'content-type: application/json' \
    -d "{\"email\":\"$email\"}" >/dev/null || { echo "sign-in: the code request for $email failed" >&2; return 1; }
  local code="" mail
  for _ in $(seq 1 150); do
    mail="$(find "$@" -maxdepth 1 -name '*.eml' 2>/dev/null | sort | xargs -r grep -l -F "$email" 2>/dev/null | tail -n 1 || true)"
    if [ -n "$mail" ]; then
      code="$(grep -hoE 'sign-in code is [0-9]{6}' "$mail" | tail -n 1 | grep -oE '[0-9]{6}' || true)"
      [ -n "$code" ] && break
    fi
    sleep 0.2
  done
  [ -n "$code" ] || { echo "sign-in: no mail with a code for $email in $*" >&2; return 1; }
  curl -sf -m 10 "http://127.0.0.1:$port/auth/otp/verify" -H 'content-type: application/json' \
    -d "{\"email\":\"$email\",\"code\":\"$code\"}" | jq -er .data.accessToken
}

# with_totp PORT TOKEN: adds a TOTP factor to the signed-in user of TOKEN through the API
# (POST /me/factors/totp, then its confirm with the code an authenticator app would show,
# RFC 6238: SHA-1, 6 digits, 30 s) and prints the confirm's new access token, at assurance
# level 2: staff answer 403 SECOND_FACTOR_REQUIRED at level 1 under the default
# STAFF_SECOND_FACTOR=required (contract §20).
with_totp() {
  local port="$1" token="$2" pending secret id code
  pending="$(curl -sf -m 10 "http://127.0.0.1:$port/me/factors/totp" -H "authorization: Bearer $token" \
    -H 'content-type: application/json' -d '{}')" || { echo "with_totp: the enrolment failed" >&2; return 1; }
  secret="$(jq -er .data.secret <<<"$pending")" && id="$(jq -er .data.id <<<"$pending")" || return 1
  code="$(python3 -c '
import base64, hashlib, hmac, struct, sys, time
s = sys.argv[1].upper()
key = base64.b32decode(s + "=" * (-len(s) % 8))
d = hmac.new(key, struct.pack(">Q", int(time.time()) // 30), hashlib.sha1).digest()
o = d[-1] & 15
print("%06d" % ((struct.unpack(">I", d[o:o + 4])[0] & 0x7FFFFFFF) % 1000000))' "$secret")"
  curl -sf -m 10 "http://127.0.0.1:$port/me/factors/totp/$id/confirm" -H "authorization: Bearer $token" \
    -H 'content-type: application/json' -d "{\"code\":\"$code\"}" | jq -er .data.accessToken
}

# me PORT TOKEN: GET /me's answer.
me() { curl -s -m 10 "http://127.0.0.1:$1/me" -H "authorization: Bearer $2"; }

# peak_rss_kib PID: the process's peak resident set (VmHWM) in KiB.
peak_rss_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# register PORT TOKEN NAME: completes the signed-in user's registration under NAME (the
# README's example otherwise).
register() {
  curl -sf -m 10 "http://127.0.0.1:$1/auth/complete-registration" -H "authorization: Bearer $2" \
    -H 'content-type: application/json' \
    -d "{\"name\":\"$3\",\"age\":27,\"gender\":\"female\",\"country\":\"Portugal\",\"countryCode\":\"+351\",\"phoneNumber\":\"912345678\"}" \
    >/dev/null
}
