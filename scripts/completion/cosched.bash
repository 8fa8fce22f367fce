# bash completion for the cosched commands. Options and subcommands are read from each program's own
# --help when completing, so this file never lists (and never goes stale on) an option.
# Installed as share/bash-completion/completions/<command> for every command (bash-completion loads it on
# first use); from a build tree: source scripts/completion/cosched.bash.

_cosched_help_words() {
  # Long options (and cosched-ctl's subcommands) of "$@" --help.
  "$@" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}

_cosched_subcommands() {
  # The lines under CLI11's "Subcommands:" heading: "  name   description".
  "$1" --help 2>/dev/null | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next} on && NF == 0 {on = 0} on {print $1}'
}

_cosched_policies() {
  local sim
  sim=$(command -v cosched-sim) && "$sim" --list-policies 2>/dev/null | cut -f1
}

_cosched_complete() {
  local cmd=$1 cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()
  case "$prev" in
    --policy|-p) mapfile -t COMPREPLY < <(compgen -W "$(_cosched_policies)" -- "$cur"); return ;;
    --socket|-s|--log|--messages|--accounting|--file|--out|-o|--catalog|-c|--models|--output)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --enforce) mapfile -t COMPREPLY < <(compgen -W "auto cgroup cgroup-v1 cgroup-v2 affinity none" -- "$cur"); return ;;
    --cpu-share) mapfile -t COMPREPLY < <(compgen -W "job thread" -- "$cur"); return ;;
  esac
  if [ "$cmd" = cosched-ctl ]; then
    # The subcommand, once given, decides the options; before it, the subcommands and global options.
    local i sub=""
    for ((i = 1; i < COMP_CWORD; i++)); do
      case "${COMP_WORDS[i]}" in
        --socket|-s|--timeout-ms) ((i++)) ;;
        -*) ;;
        *) sub=${COMP_WORDS[i]}; break ;;
      esac
    done
    if [ -z "$sub" ]; then
      mapfile -t COMPREPLY < <(compgen -W "$(_cosched_subcommands "$cmd") $(_cosched_help_words "$cmd")" -- "$cur")
    elif [ "$sub" = policy ] && [ "$COMP_CWORD" -eq $((i + 1)) ]; then
      mapfile -t COMPREPLY < <(compgen -W "$(_cosched_policies)" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "$(_cosched_help_words "$cmd" "$sub")" -- "$cur")
    fi
    return
  fi
  if [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_cosched_help_words "$cmd")" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")  # workloads, run directories, programs
  fi
}

_cosched_complete_run() {
  # After `--`, cosched-run's arguments are a command line of their own.
  local i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [ "${COMP_WORDS[i]}" = -- ]; then
      if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
        mapfile -t COMPREPLY < <(compgen -c -- "${COMP_WORDS[COMP_CWORD]}")
      else
        mapfile -t COMPREPLY < <(compgen -f -- "${COMP_WORDS[COMP_CWORD]}")
      fi
      return
    fi
  done
  _cosched_complete "$@"
}

complete -F _cosched_complete cosched-rm cosched-ctl qsubmit cosched-sim cosched-swfgen cosched-report
complete -F _cosched_complete_run cosched-run
