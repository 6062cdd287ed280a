#!/usr/bin/env bash
# Runs a command on this machine as it would be without the development files of OpenSSL,
# avahi's dns_sd and Argon2 (Debian's libssl-dev, libavahi-compat-libdnssd-dev and
# libargon2-dev): headers, pkg-config files and the link-time libraries hidden, in a mount
# namespace of the command's own (as root), by overlays whose whiteouts remove each file of
# those packages from its folder. The runtime libraries (libssl3, ...) stay, as on any Debian.
# The rest of the machine is untouched, and nothing is left when the command ends.
#
#   bash scripts/without-dev-libs.sh swift build --package-path Examples/ReporterOnly
set -euo pipefail
packages=(libssl-dev libavahi-compat-libdnssd-dev libargon2-dev)
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARGUMENT...]" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$0: needs root (a mount namespace and overlays)" >&2; exit 1; }
work=$(mktemp -d /tmp/without-dev-libs.XXXXXX)
trap 'rm -rf "$work"' EXIT
# What the packages hold, outside /usr/share (their documentation), top-most first: a folder
# they hold alone (include/openssl) is hidden whole, a file of a shared folder alone.
dpkg -L "${packages[@]}" | grep -v '^/usr/share' | sort -u > "$work/owned"
hidden=()
while read -r path; do
    [ -e "$path" ] || [ -L "$path" ] || continue
    parent=$(dirname "$path")
    # A folder of the packages' own, below one already hidden: nothing more to do.
    for done in "${hidden[@]}"; do [[ "$path" == "$done"/* ]] && continue 2; done
    if [ -d "$path" ] && [ ! -L "$path" ]; then
        # A folder: hidden whole only if every entry in it is the packages'.
        others=$(find "$path" -mindepth 1 | grep -vxF -f "$work/owned" | head -1 || true)
        [ -z "$others" ] || continue
    fi
    hidden+=("$path")
    echo "$parent" >> "$work/parents"
done < "$work/owned"
[ ${#hidden[@]} -gt 0 ] || { echo "$0: none of ${packages[*]} is installed" >&2; exit 1; }
# One overlay per folder holding a hidden entry, outer folders first; the whiteouts (0/0
# character devices) in its upper layer hide the entries.
script="$work/mounts.sh"
echo 'set -euo pipefail' > "$script"
index=0
for parent in $(sort -u "$work/parents" | awk '{ print length, $0 }' | sort -n | cut -d' ' -f2-); do
    index=$((index + 1))
    mkdir -p "$work/$index/upper" "$work/$index/work"
    for path in "${hidden[@]}"; do
        [ "$(dirname "$path")" = "$parent" ] && mknod "$work/$index/upper/$(basename "$path")" c 0 0
    done
    echo "mount -t overlay overlay -o lowerdir=$parent,upperdir=$work/$index/upper,workdir=$work/$index/work $parent" >> "$script"
done
echo "hidden: ${#hidden[@]} entries of ${packages[*]}" >&2
unshare --mount --propagation private bash -c "$(cat "$script")"' && exec "$@"' without-dev-libs "$@"
