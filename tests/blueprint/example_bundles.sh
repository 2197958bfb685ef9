# The bundled examples as a static discovery list, for the tests that run
# `culprit run` over many of them. Sourced:
#
#   . example_bundles.sh
#   example_bundles SRC [MAX]   # sets BUNDLES ("DIR", "DIR", ... for a YAML flow list)
#                               # and BUNDLE_COUNT: every bundle with a context.json
#                               # under SRC/examples, then SRC/examples/real, in name order,
#                               # at most MAX of them
example_bundles() {
  local src=$1 max=${2:-0} b
  BUNDLES="" BUNDLE_COUNT=0
  for b in "$src"/examples/*/ "$src"/examples/real/*/; do
    [ -f "$b/context.json" ] || continue
    BUNDLES+="\"${b%/}\", "
    BUNDLE_COUNT=$((BUNDLE_COUNT + 1))
    [ "$max" -gt 0 ] && [ "$BUNDLE_COUNT" -ge "$max" ] && break
  done
  BUNDLES=${BUNDLES%, }
}
