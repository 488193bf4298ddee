"""The script that stops one command of a swedeck session.

Builtins only (it also runs inside busybox images). Commands run one at a time, so what
started while this one ran is this one's, whatever it calls itself: the kernel's start time
is the one mark a command cannot change. Victims:
- every process tagged `SWEDECK_CMD=<id>` (the command's programs);
- every process of the session started since the command began, whatever its tag (a
  command that exports `SWEDECK_CMD=idle`, makes the variable read-only, or `setsid`s away
  is still found): in the session's tree locally (the tree's root is a child subreaper, so
  double-forked orphans stay in it), in the whole container in Docker (nothing else runs
  there but PID 1 and the shell);
- every untagged process in the tree (forked subshells carry the shell's own environment).
Programs an earlier command left running (another tag, started before) are spared, so
`sleep 100 &` started before keeps running.

Run as `bash -c KILL_TREE swedeck-kill SHELL_PID COMMAND_ID SINCE_TICKS SCOPE [ROOT_PID]`:
SINCE_TICKS is when the command began, in the clock ticks since boot that /proc/PID/stat
counts start times in (-1: unknown), SCOPE `tree` or `container`, ROOT_PID the subreaper
above the shell (locally), whose other descendants are the session's too.
"""

KILL_TREE = r"""shell=$1 id=$2 newest=${3:--1} scope=${4:-tree} root=${5:-$1}
kill -USR1 "$shell" 2>/dev/null
for round in 1 2 3 4 5 6 7 8; do
    declare -A parent=() tag=() start=()
    victims=()
    for dir in /proc/[0-9]*; do
        pid=${dir#/proc/}
        [[ $pid == "$shell" || $pid == "$root" || $pid == "$$" ]] && continue
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
        recent=0
        [[ $newest -ge 0 && ${start[$pid]} -ge $newest ]] && recent=1
        if [[ $scope == container && $recent == 1 && $pid != 1 ]]; then victims+=("$pid"); continue; fi
        [[ -n ${tag[$pid]} && $recent == 0 ]] && continue
        up=${parent[$pid]} depth=0
        while [[ -n $up && $up != 0 && $up != 1 && $depth -lt 64 ]]; do
            if [[ $up == "$shell" || $up == "$root" ]]; then victims+=("$pid"); break; fi
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
