#!/bin/bash
# The README's keys section is the key table (dsv41-top keys), word for word.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build/dsv41-top}
want=$("$bin" keys)
have=$(sed -n '/<!-- keys:begin -->/,/<!-- keys:end -->/p' "$root/README.md" | sed '1d;$d')
if [ "$want" = "$have" ]; then
    echo "ok   - README's keys section matches the key table"
else
    echo "FAIL - README's keys section differs from 'dsv41-top keys':"
    diff <(printf '%s\n' "$have") <(printf '%s\n' "$want")
    exit 1
fi
