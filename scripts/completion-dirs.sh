#!/bin/sh
# Where make install puts a completion script, so that the shell on this
# machine finds it with its own default search path, and what to add to a
# shell's startup file when it does not.
#
#   scripts/completion-dirs.sh dir bash|zsh|fish   the directory for PREFIX
#   scripts/completion-dirs.sh hints               one line per shell that will
#                                                   not find its script by itself
#
# Environment: PREFIX (default /usr/local) and DESTDIR. With DESTDIR (a
# staged install, a package) the directories are PREFIX/share's, and no
# shell is asked.
#
#   bash  PREFIX/share/bash-completion/completions, which the bash-completion
#         package loads from when PREFIX/share is in XDG_DATA_DIRS (by default
#         /usr/local/share:/usr/share) or is ~/.local/share. Plain bash without
#         that package loads no completion: the hint is the line to source.
#   zsh   PREFIX/share/zsh/site-functions; /usr/local's is in zsh's default
#         fpath, ~/.local's is not: the hint is the fpath line.
#   fish  PREFIX/share/fish/vendor_completions.d where fish searches it (fish
#         3.6 of Debian 12 searches /usr/share's and ~/.local/share's, not
#         /usr/local/share's); otherwise, for the default PREFIX, fish's own
#         system directory ($__fish_sysconf_dir/completions, /etc/fish), else
#         the PREFIX one and the hint.
set -eu
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}

has() { [ -z "$DESTDIR" ] && command -v "$1" >/dev/null 2>&1; }

bashdir=$PREFIX/share/bash-completion/completions
zshdir=$PREFIX/share/zsh/site-functions
fishdir=$PREFIX/share/fish/vendor_completions.d

bash_loader=/usr/share/bash-completion/bash_completion
bash_found() {
	[ -e "$bash_loader" ] || return 1
	for d in $(echo "${XDG_DATA_DIRS:-/usr/local/share:/usr/share}" | tr : ' ') "${XDG_DATA_HOME:-$HOME/.local/share}"; do
		[ "$d/bash-completion/completions" = "$bashdir" ] && return 0
	done
	return 1
}
zsh_found() { zsh -fc 'print -rl -- $fpath' | grep -qxF "$zshdir"; }
fish_found() { fish -c 'printf "%s\n" $fish_complete_path' | grep -qxF "$1"; }
fish_dir() {
	if ! has fish || fish_found "$fishdir"; then
		echo "$fishdir"
	elif [ "$PREFIX" = /usr/local ]; then
		echo "$(fish -c 'echo $__fish_sysconf_dir')/completions"
	else
		echo "$fishdir"
	fi
}

case "${1:-}" in
dir)
	case "${2:-}" in
	bash) echo "$bashdir" ;;
	zsh) echo "$zshdir" ;;
	fish) fish_dir ;;
	*) echo "usage: $0 dir bash|zsh|fish" >&2; exit 2 ;;
	esac ;;
hints)
	if has bash && ! bash_found; then
		echo "bash: bash-completion does not load $bashdir: add to ~/.bashrc:  source $bashdir/bpfmeta"
	fi
	if has zsh && ! zsh_found; then
		echo "zsh: $zshdir is not in zsh's fpath: add to ~/.zshrc:  fpath=($zshdir \$fpath); autoload -Uz compinit && compinit"
	fi
	if has fish && ! fish_found "$(fish_dir)"; then
		echo "fish: fish does not search $(fish_dir): add to ~/.config/fish/config.fish:  set -p fish_complete_path $(fish_dir)"
	fi ;;
*) echo "usage: $0 dir bash|zsh|fish | hints" >&2; exit 2 ;;
esac
