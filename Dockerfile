# syntax=docker/dockerfile:1
#
# mirrorql as a static binary on distroless: no shell, no package manager,
# CA certificates and tzdata included, running as an unprivileged user.
#
#   docker build -t mirrorql:local --build-arg VERSION=$(git describe --always) .
#   docker run --rm -p 8080:8080 -p 5600:5600 -e MIRRORQL_DATABASE_URL=postgres://… mirrorql:local
#
# docker-compose.yml runs it with PostgreSQL.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first: this layer is rebuilt only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X mirrorql/observe.Version=${VERSION}" \
      -o /out/mirrorql . \
 && /out/mirrorql help >/dev/null

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mirrorql /mirrorql
# uid/gid 65532 of the distroless image
USER nonroot:nonroot
ENV MIRRORQL_LISTEN=:8080 \
    MIRRORQL_GRPC_LISTEN=:5600 \
    MIRRORQL_LOG_FORMAT=json
# 5600: the SDKs' gRPC (ConsensusService), the mirror node's port
EXPOSE 8080 5600
# distroless has no curl: the binary asks its own /health/readiness on MIRRORQL_LISTEN.
HEALTHCHECK --interval=10s --timeout=5s --start-period=15s --retries=3 \
  CMD ["/mirrorql", "healthcheck"]
ENTRYPOINT ["/mirrorql"]
CMD ["serve"]
