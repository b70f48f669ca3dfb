# Shared by the download tests (tests/hub, tests/it): sourced, never run.
# REV names the revision directory in the hub root.
# what the download must produce: every file, the shards whole, no parts
expect_dir() { # dir [revision dir]
    local d=$1 r=${2:-$REV} f bad=0
    for f in $(cd "$r" && find . -type f ! -name '*.part[0-9]*' | sort); do
        cmp -s "$r/$f" "$d/$f" || { echo "    differs: $f" >&2; bad=1; }
    done
    for s in model-00005-of-00006.safetensors model-00006-of-00006.safetensors; do
        cat "$r/$s".part* | cmp -s - "$d/$s" || { echo "    differs: $s" >&2; bad=1; }
    done
    [ -z "$(find "$d" -name '*.incomplete' -o -name '*.part[0-9]*')" ] ||
        { echo "    left behind: $(find "$d" -name '*.incomplete' -o -name '*.part[0-9]*')" >&2; bad=1; }
    return $bad
}
