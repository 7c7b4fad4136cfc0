# Images for the bot (triage service) and the workers.
#
#   docker build --target bot -t redfix-bot .
#   docker build --target worker -t redfix-worker .
#
# Both run `go test` on the repositories they triage and repair, so both keep
# the Go toolchain and git at run time.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bot ./cmd/bot \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/worker ./cmd/worker

FROM golang:1.26-bookworm AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates bubblewrap \
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
