# Images for the bot (triage service) and the workers.
#
#   docker build --target bot -t redfix-bot .
#   docker build --target worker -t redfix-worker .
#
# Both run `go test` on the repositories they triage and repair, so both keep
# the Go toolchain and git at run time.
#
# Other languages' toolchains: the repositories' tests run inside the image,
# so the tools they need must be in it. Debian packages go through a build
# argument:
#
#   docker build --target worker \
#     --build-arg EXTRA_APT_PACKAGES="python3 python3-pytest nodejs npm" -t redfix-worker .
#
# Anything else (a toolchain from a tarball, a language's own installer) goes
# in a stage of your own on top of `worker` or `bot`: switch to USER root,
# install, clean up, and switch back to USER 10001.
#
# Base images are pinned to exact versions; after pulling them once, pin
# them by digest as well (golang:1.26.8-bookworm@sha256:...) so that a
# re-pushed tag cannot change the build. Health: Kubernetes ignores a
# HEALTHCHECK; the manifests probe /healthz and /readyz (deploy/k8s).
#
# C toolchain and libc: the binaries are built with cgo (tree-sitter's
# grammars are C), by the golang image's own gcc (Debian 12's gcc 12.2), and
# link glibc dynamically: Debian 12's glibc 2.36. The images run on that
# same base image, so they carry the libc the binaries were linked against;
# a base of another Debian release must be the base of every stage.
#
# Checked by `go test ./deploy` (no Docker engine on the development
# machines): pinned FROM lines, a non-root USER in every image, no ADD of
# URLs, apt lists removed in the layer that installs; and the build stage's
# RUN line below is run as it stands on a machine of the same base (Go
# 1.26.8, Debian 12), both binaries start, and they need no glibc newer than
# 2.36.

ARG GO_IMAGE=golang:1.26.8-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The revision redfix_build_info names: the toolchain stamps it when the
# context holds the checkout's .git directory; a context without one (a git
# worktree, an exported tree) passes it: --build-arg REVISION=$(git rev-parse HEAD).
ARG REVISION=""
# cgo on: the Python, JavaScript and TypeScript parsers are tree-sitter's C
# grammars; with CGO_ENABLED=0 neither command builds.
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w -X github.com/redfix/redfix/pkg/app.buildRevision=${REVISION}" -o /out/bot ./cmd/bot \
 && CGO_ENABLED=1 go build -trimpath -ldflags="-s -w -X github.com/redfix/redfix/pkg/app.buildRevision=${REVISION}" -o /out/worker ./cmd/worker

FROM ${GO_IMAGE} AS runtime
ARG EXTRA_APT_PACKAGES=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates bubblewrap ${EXTRA_APT_PACKAGES} \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 redfix
USER 10001
ENV REDFIX_DATA_DIR=/home/redfix/data \
    GOFLAGS=-mod=mod \
    GOTOOLCHAIN=local
WORKDIR /home/redfix

FROM runtime AS bot
COPY --from=build /out/bot /usr/local/bin/bot
EXPOSE 8080
ENTRYPOINT ["bot"]
CMD ["serve"]

FROM runtime AS worker
COPY --from=build /out/worker /usr/local/bin/worker
ENTRYPOINT ["worker"]
CMD ["run"]
