"""The script that stops one command of a swedeck session.

Builtins only (it also runs inside busybox images). Victims: every process tagged with
SWEDECK_CMD=<id> (the command's exec'd programs, even after setsid/reparenting), and
every untagged descendant of the session shell (forked subshells of the command carry the
shell's start-up environment). Programs of earlier commands (another tag) are spared, so
`sleep 100 &` started before keeps running.

A program that drops the tag (`env -i`) and leaves the tree (a double fork, `setsid -f`) is
still found: on Linux the local shell is a child subreaper (`local.py`), so such orphans
stay its descendants; in a container, where orphans go to PID 1 and nothing but the session
runs, the third argument N names "untagged orphans started in the last N seconds" as victims.

Run as `bash -c KILL_TREE swedeck-kill SHELL_PID COMMAND_ID [ORPHANS_SINCE_S]` beside the session.
"""

KILL_TREE = r"""shell=$1 id=$2 since=${3:-}
kill -USR1 "$shell" 2>/dev/null
newest=-1
if [[ -n $since ]] && read -r uptime _ < /proc/uptime; then
    # Start times in /proc/PID/stat are clock ticks (USER_HZ, 100 on Linux) since boot.
    uptime=${uptime%.*}
    newest=$(( (uptime - since) * 100 )); (( newest < 0 )) && newest=0
fi
for round in 1 2 3 4 5 6 7 8; do
    declare -A parent=() tag=() start=()
    victims=()
    for dir in /proc/[0-9]*; do
        pid=${dir#/proc/}
        [[ $pid == "$shell" || $pid == "$$" ]] && continue
        read -r stat < "$dir/stat" 2>/dev/null || continue
        rest=${stat##*) }
        set -- $rest
        parent[$pid]=$2 start[$pid]=${20}
        tag[$pid]=
        if mapfile -d '' -t vars < "$dir/environ" 2>/dev/null; then
            for var in "${vars[@]}"; do
                [[ $var == SWEDECK_CMD=* ]] && tag[$pid]=${var#SWEDECK_CMD=}
            done
        fi
    done
    for pid in "${!parent[@]}"; do
        if [[ ${tag[$pid]} == "$id" ]]; then victims+=("$pid"); continue; fi
        [[ -n ${tag[$pid]} ]] && continue
        if [[ ${parent[$pid]} == 1 && $newest -ge 0 && ${start[$pid]} -ge $newest ]]; then
            victims+=("$pid"); continue
        fi
        up=${parent[$pid]} depth=0
        while [[ -n $up && $up != 0 && $up != 1 && $depth -lt 64 ]]; do
            if [[ $up == "$shell" ]]; then victims+=("$pid"); break; fi
            up=${parent[$up]} depth=$((depth + 1))
        done
    done
    ((${#victims[@]})) || break
    # Freeze first: a parent must not see its child die and run the next step before its own turn.
    kill -STOP "${victims[@]}" 2>/dev/null
    kill -9 "${victims[@]}" 2>/dev/null
    unset parent tag start
done
"""
