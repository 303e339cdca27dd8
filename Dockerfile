# A static, non-root tollgate image: docker build -t tollgate .
FROM golang:1.27.3 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd cmd
COPY internal internal
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /tollgate ./cmd/tollgate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /tollgate /tollgate
USER 65532:65532
EXPOSE 8443 9090
ENTRYPOINT ["/tollgate"]
