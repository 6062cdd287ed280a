# The lab as an image, for fleets (Scenarios/k8s/fleet.yaml) and CI runners without Swift.
#   docker build -t crypto-lab .
#   docker run --rm crypto-lab lab --version
# Build: Swift 6.3 on Debian 12 with the system libraries the lab links (OpenSSL, avahi's
# dns_sd, jemalloc, SQLite). Run: Debian 12 slim with their runtime packages only; the Swift
# runtime is linked in (--static-swift-stdlib), so no toolchain ships in the image.
FROM swift:6.3-bookworm AS build
# Unpinned on purpose: Debian 12's security updates should reach the next build.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libssl-dev libavahi-compat-libdnssd-dev libjemalloc-dev libsqlite3-dev libargon2-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# .git comes along: the build records the commit it was made from (lab --version).
COPY . .
RUN swift build -c release --static-swift-stdlib --product lab \
    && install -D "$(swift build -c release --show-bin-path)/lab" /out/lab

FROM debian:bookworm-slim
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libssl3 libavahi-compat-libdnssd1 libjemalloc2 libsqlite3-0 libargon2-1 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --create-home --home-dir /lab lab
COPY --from=build /out/lab /usr/local/bin/lab
USER 10001
WORKDIR /lab
ENTRYPOINT []
CMD ["lab", "--help"]
