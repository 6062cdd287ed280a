#!/usr/bin/env bash
# Makes throw-away TLS identities for the pinning tests, with the openssl command line (an
# implementation independent of the lab's swift-nio-ssl/BoringSSL):
#   server.pem/.key  the certificate the tests' clients pin
#   other.pem/.key   another self-signed certificate: the man in the middle
# and prints nothing. Usage: generate-certs.sh DIR. Never commit what it writes.
set -euo pipefail
dir="${1:?usage: generate-certs.sh DIR}"
mkdir -p "$dir"
for name in server other; do
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/$name.key" -out "$dir/$name.pem" -days 2 \
    -subj "/CN=crypto-lab test $name" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
done
