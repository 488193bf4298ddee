"""The script that stops one command of a swedeck session.

Builtins only (it also runs inside busybox images). Victims: every process tagged with
SWEDECK_CMD=<id> (the command's exec'd programs, even after setsid/reparenting), and
every untagged descendant of the session shell (forked subshells of the command carry the
shell's start-up environment). Programs of earlier commands (another tag) are spared, so
`sleep 100 &` started before keeps running.

Run as `bash -c KILL_TREE swedeck-kill SHELL_PID COMMAND_ID` beside the session.
"""

KILL_TREE = r"""shell=$1 id=$2
kill -USR1 "$shell" 2>/dev/null
for round in 1 2 3 4 5 6 7 8; do
    declare -A parent=() tag=()
    victims=()
    for dir in /proc/[0-9]*; do
        pid=${dir#/proc/}
        [[ $pid == "$shell" || $pid == "$$" ]] && continue
        read -r stat < "$dir/stat" 2>/dev/null || continue
        rest=${stat##*) }
        set -- $rest
        parent[$pid]=$2
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
    unset parent tag
done
"""
