# Helpers the check and test-server scripts share; source it, do not run it:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# install_on_ci WHO WHAT PACKAGE...: on CI (CI=true, Debian), installs the Debian
# PACKAGEs, with sudo unless root, saying "WHO: installing WHAT". Elsewhere it installs
# nothing and returns 1, so the caller says what is missing: a developer's machine is
# theirs to change.
install_on_ci() {
    local who="$1" what="$2"
    shift 2
    [ "${CI:-}" = "true" ] && command -v apt-get >/dev/null 2>&1 || return 1
    echo "$who: installing $what"
    local sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >/dev/null && $sudo_cmd apt-get install -y -qq "$@" >/dev/null
}

# serve_when_ready TRIES: asks the caller's `ready` every half second, at most TRIES
# times; once it answers, logs "ready" (the caller's `log`), prints $URL on stdout and
# exits 0. Returns 1 when it never answered, for the caller to say why.
serve_when_ready() {
    local tries="$1"
    for _ in $(seq 1 "$tries"); do
        if ready; then
            log "ready"
            echo "$URL"
            exit 0
        fi
        sleep 0.5
    done
    return 1
}

# fail MESSAGE: says "$CHECK: FAIL: MESSAGE" on stderr and exits 1 (CHECK: the caller's
# name, set before it sources this file).
fail() {
    echo "${CHECK:-check}: FAIL: $*" >&2
    exit 1
}

# langcamp_binary [PATH]: the langcamp binary to check (default target/debug/langcamp) as
# an absolute path, for a check that changes directory; fails when there is none.
langcamp_binary() {
    local binary="${1:-target/debug/langcamp}"
    [ -x "$binary" ] || fail "no executable at $binary (build it first: cargo build -p langcamp-cli)"
    echo "$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
}
