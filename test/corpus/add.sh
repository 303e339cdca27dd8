#!/usr/bin/env bash
# add.sh NAME REPOSITORY REV PATH... stores files of a public repository in the
# corpus: NAME/PATH.gz (gzip -n -9, so that the same file gives the same bytes),
# NAME/LICENSE (and NOTICE where there is one) from the same commit, and
# NAME/SOURCE naming the repository, the revision, its commit and each file's
# git blob id, which corpus_test.go checks after unpacking. A PATH that is a
# directory stores every file under it. REPOSITORY is the repository's URL;
# with GIT_DIR set, the files are read from that local clone of it instead.
set -euo pipefail
name=$1 repo=$2 rev=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gitdir=${GIT_DIR:-}
if [[ -z $gitdir ]]; then
	git clone --quiet --bare --filter=blob:none "$repo" "$work/repo"
	gitdir=$work/repo
fi
unset GIT_DIR
commit=$(git --git-dir="$gitdir" rev-parse "$rev^{commit}")
out=$here/$name
rm -rf "$out"
mkdir -p "$out"
{
	echo "repository: $repo"
	echo "revision: $rev"
	echo "commit: $commit"
} >"$out/SOURCE"
for f in LICENSE NOTICE; do
	if git --git-dir="$gitdir" cat-file -e "$commit:$f" 2>/dev/null; then
		git --git-dir="$gitdir" show "$commit:$f" >"$out/$f"
		echo "licence: $f" >>"$out/SOURCE"
	fi
done
for p in "$@"; do
	git --git-dir="$gitdir" ls-tree -r "$commit" -- "$p" | while read -r _ type blob path; do
		[[ $type == blob ]] || continue
		mkdir -p "$out/$(dirname "$path")"
		git --git-dir="$gitdir" cat-file blob "$blob" | gzip -n -9 >"$out/$path.gz"
		echo "file: $blob $path" >>"$out/SOURCE"
	done
done
