#!/usr/bin/env bash
# Drives the real `langcamp console` in a detached tmux session (100x30): switches through
# every view, checks that each one rendered, edits a mail template in "the user's editor"
# (a script standing in for one: the console steps aside for it and comes back), finds
# that edit on the audit trail by filtering on its action, quits with `q`, and checks
# that the console ended and exited 0. Builds nothing: pass the
# binary (default target/debug/langcamp).
#
#   scripts/console-check.sh [path/to/langcamp]
#
# Exits non-zero, with a message and the last screen, on any failure.
set -euo pipefail
CHECK=console-check
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

binary="$(langcamp_binary "${1:-}")"

if ! command -v tmux >/dev/null 2>&1; then
    install_on_ci console-check tmux tmux || fail "tmux is not installed"
fi

work="$(mktemp -d)"
session="langcamp-console-check-$$"
socket="$work/tmux.sock"
tmux_() { tmux -S "$socket" "$@"; }
cleanup() {
    tmux_ kill-server >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

export DATA_DIR="$work/data"
export DATABASE_URL="sqlite://$DATA_DIR/langcamp.db?mode=rwc"
mkdir -p "$DATA_DIR"

"$binary" migrate >/dev/null || fail "langcamp migrate failed"
if "$binary" --help | grep -qE '^\s+seed\b'; then
    "$binary" seed --demo >/dev/null || fail "langcamp seed --demo failed"
    seeded=yes
else
    seeded=no
fi

# The user's editor, for the mail templates: it changes the subject of the file it is
# given.
cat >"$work/editor" <<'EDITOR'
#!/bin/sh
sed -i -e '1s/.*/subject: Checked by console-check/' "$1"
EDITOR
chmod +x "$work/editor"

# The console runs in the session's only window; when it ends, its exit status is written
# and the window closes, which ends the session.
tmux_ new-session -d -s "$session" -x 100 -y 30 \
    "env DATA_DIR='$DATA_DIR' DATABASE_URL='$DATABASE_URL' TERM=xterm-256color VISUAL='$work/editor' '$binary' console; echo \$? > '$work/exit-status'"

screen() { tmux_ capture-pane -p -t "$session" 2>/dev/null || true; }

# Waits (up to 10 s) until the screen contains $1 (a fixed string).
wait_for() {
    local what="$1" i
    for i in $(seq 1 100); do
        if screen | grep -qF -- "$what"; then
            return 0
        fi
        sleep 0.1
    done
    echo "--- last screen:" >&2
    screen >&2
    fail "timed out waiting for \"$what\""
}

# The tab bar names every view; each view's pane title is "┌ <Title> ·" and appears only
# on that view. At 100 columns the tab bar shortens a long title (View::short_title):
# "Hooks" is the Webhooks view.
wait_for "? help"
views="$(screen | head -n 1 | grep -oE '[0-9] [A-Z][a-z]+' || true)"
[ -n "$views" ] || fail "no views in the tab bar"
count=0
while read -r number title; do
    tmux_ send-keys -t "$session" "$number"
    case "$title" in
        Hooks) title=Webhooks ;;
    esac
    wait_for "┌ $title ·"
    # Loaded: the loading placeholder is gone.
    for i in $(seq 1 100); do
        screen | grep -q "Loading" || break
        sleep 0.1
    done
    screen | grep -q "Loading" && fail "$title view still loading after 10 s"
    echo "console-check: view $number $title rendered"
    count=$((count + 1))
done <<<"$views"

# The mail templates view: `e` edits the selected template in $VISUAL, and the console
# comes back showing it saved.
edited=no
if grep -qx '[0-9] Mail' <<<"$views"; then
    tmux_ send-keys -t "$session" "$(grep -x '[0-9] Mail' <<<"$views" | cut -c1)"
    wait_for "┌ Mail ·"
    tmux_ send-keys -t "$session" e
    wait_for "the next mail uses it"
    wait_for "Checked by console-check"
    echo "console-check: a mail template edited in \$VISUAL and saved"
    edited=yes
fi

# The audit trail view: the edit is on it, as the operator's; filtering on its action
# keeps only that entry.
audited=no
if [ "$edited" = yes ] && grep -qx '[0-9] Audit' <<<"$views"; then
    tmux_ send-keys -t "$session" "$(grep -x '[0-9] Audit' <<<"$views" | cut -c1)"
    wait_for "┌ Audit ·"
    wait_for "Action     mail_template.put"
    tmux_ send-keys -t "$session" a
    wait_for "Only the action"
    tmux_ send-keys -t "$session" -l "mail_template.put"
    tmux_ send-keys -t "$session" Enter
    wait_for "Action: mail_template.put"
    wait_for "page 1 of 1 · 1 entry "
    echo "console-check: the edit found on the audit trail by its action"
    audited=yes
fi

tmux_ send-keys -t "$session" q
for i in $(seq 1 100); do
    [ -f "$work/exit-status" ] && break
    sleep 0.1
done
[ -f "$work/exit-status" ] || { screen >&2; fail "the console did not exit after q"; }
status="$(cat "$work/exit-status")"
[ "$status" = 0 ] || fail "the console exited with status $status"
for i in $(seq 1 50); do
    tmux_ has-session -t "$session" 2>/dev/null || break
    sleep 0.1
done
tmux_ has-session -t "$session" 2>/dev/null && fail "the tmux session is still running after q"

echo "console-check: OK ($count views, demo data: $seeded, template edited: $edited, on the audit trail: $audited, exit status 0)"
