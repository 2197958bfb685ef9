#!/usr/bin/env bash
# No source file outside base/vocabulary.* spells a vocabulary word as a
# string literal: the words are the statuses, domains, actions and terminal
# states docs/vocabulary.md lists (which tests/base/vocabulary_test.cpp holds
# equal to the table). A literal "ambiguous" in some .cpp is how the table
# and the code drift apart. Sub-domain roots ("host", "gpu", "scheduler")
# are also JSON keys and field names everywhere; they are not checked.
#
# Four words are also ordinary strings and are not checked: `user` (a job's
# owner, a template variable), `none` (an output format, "no domain"),
# `restart` and `inspect` (prose). Their uses as actions and domains go
# through base/vocabulary.h like the rest; review keeps them there.
# Comments are skipped; so are JavaScript assets (they read the words from
# the JSON the server sends) and tests.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
words=$(awk '/^## /{on = ($0 !~ /^## Sub-domain roots/)} on' docs/vocabulary.md |
        grep -oE '^\| `[A-Za-z_]+`' | sed 's/^| `//; s/`$//' | sort -u | grep -vxE 'user|none|restart|inspect')
[ -n "$words" ] || { echo "no words read from docs/vocabulary.md" >&2; exit 1; }
pattern="\"($(echo "$words" | paste -sd'|'))\""
found=$(find base compiler runtime blueprint dashboard cli service -name '*.cpp' -o -name '*.h' |
        grep -v '^base/vocabulary\.' | sort |
        xargs perl -ne '
          next if m{^\s*//};             # a comment line
          s{\s//\s.*$}{};                # a trailing comment
          print "$ARGV:$.: $_" if /'"$pattern"'/;
        } continue { close ARGV if eof' || true)
if [ -n "$found" ]; then
  echo "vocabulary words spelled as literals (use base/vocabulary.h):" >&2
  echo "$found" >&2
  exit 1
fi
echo "no vocabulary literals outside base/vocabulary.* ($(echo "$words" | wc -l) words checked)"
