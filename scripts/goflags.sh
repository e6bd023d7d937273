# Sourced by scripts/test.sh and scripts/lint.sh. Build paths out of the
# binaries (-trimpath), so that a fresh clone in a new directory (CI's) finds
# its packages and test binaries in the Go build cache that the last clone
# filled; and no DWARF in them (-ldflags=-w), a quarter of each link's time.
# The caller's GOFLAGS come after, and win.
case " ${GOFLAGS:-} " in
*" -trimpath "*) ;;
*) export GOFLAGS="-trimpath -ldflags=-w${GOFLAGS:+ $GOFLAGS}" ;;
esac
