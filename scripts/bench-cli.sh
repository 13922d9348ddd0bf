#!/usr/bin/env bash
# The release CLI end to end, this tree against an earlier build, in the same run:
# builds REV's `switchboard` in release mode, then runs `cargo bench --bench cli_roundtrip` with it
# as SWITCHBOARD_BASELINE_CLI. The bench alternates the two binaries turn by turn and prints, for
# each, wall time, CPU time (user+sys), peak RSS and system calls per token (when strace is
# installed), with the ratio current/previous: a regression reads as a ratio above 1.
#
#   scripts/bench-cli.sh            # against the default baseline (below)
#   scripts/bench-cli.sh v0.3.0     # against a tag, a branch or a commit
#   SWITCHBOARD_BENCH_PAIRS=30 scripts/bench-cli.sh
#
# Default REV: the last release tag (v*) that is not HEAD itself, when the repository has one;
# otherwise the parent of the last commit that changed crates/ or Cargo.lock, i.e. the engine and
# CLI as they were before their most recent change. (Comparing against HEAD^ would compare a tree
# with itself after a docs-only commit.)
#
# REV is built from a temporary `git worktree` into its own target directory,
# $CARGO_TARGET_DIR/bench-cli-baseline (kept between runs, so only what changed is rebuilt; the
# registry in CARGO_HOME is shared). It must not share the target directory of this tree: cargo
# names a workspace crate's artifacts by its path inside the workspace and trusts file times, so
# two checkouts building into one directory can each pick up the other's compiled crates.
set -euo pipefail

root=$(git rev-parse --show-toplevel)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
case $target in /*) ;; *) target=$root/$target ;; esac

if [[ $# -gt 0 ]]; then
    rev=$1
elif tag=$(git describe --tags --abbrev=0 --match 'v*' HEAD^ 2>/dev/null); then
    rev=$tag
else
    last=$(git log -1 --format=%H -- crates Cargo.lock)
    rev=$last^
fi
commit=$(git rev-parse --verify --quiet "$rev^{commit}") || {
    echo "$0: '$rev' is not a commit here" >&2
    exit 2
}
short=$(git rev-parse --short "$commit")
echo "baseline: $rev ($short $(git log -1 --format=%s "$commit" | cut -c1-70))" >&2

baseline_target=$target/bench-cli-baseline
baseline_bin=$baseline_target/switchboard-$short
if [[ ! -x $baseline_bin ]]; then
    tree=$(mktemp -d "${TMPDIR:-/tmp}/switchboard-baseline.XXXXXX")
    cleanup() { git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"; }
    trap cleanup EXIT
    git worktree add --detach --quiet "$tree" "$commit"
    echo "building $short in $tree (target: $baseline_target) ..." >&2
    (cd "$tree" && CARGO_TARGET_DIR=$baseline_target cargo build --release --locked -p switchboard-cli --bin switchboard)
    cp "$baseline_target/release/switchboard" "$baseline_bin"
    cleanup
    trap - EXIT
fi

SWITCHBOARD_BASELINE_CLI=$baseline_bin exec cargo bench -p switchboard-cli --bench cli_roundtrip
