# syntax=docker/dockerfile:1
# redlockd: the server jar on a JRE. Build from the repository root:
#   docker build -t redlockd .
#   docker run --rm -p 50051:50051 redlockd --redis redis://host1:6379,redis://host2:6379,redis://host3:6379

FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
# Maven reads every module's pom even when it builds only some of them.
COPY pom.xml ./
COPY proto/pom.xml proto/buf.yaml proto/
COPY server/pom.xml server/
COPY simulation/pom.xml simulation/
COPY client-java/pom.xml client-java/
COPY shedlock/pom.xml shedlock/
COPY spring-boot-starter/pom.xml spring-boot-starter/
COPY integration-tests/pom.xml integration-tests/
COPY bench/pom.xml bench/
COPY proto/src proto/src
COPY server/src server/src
# The cache mount keeps downloaded dependencies between builds (BuildKit).
RUN --mount=type=cache,target=/root/.m2 mvn -B -DskipTests -pl server -am package

FROM eclipse-temurin:17-jre
RUN useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin redlockd
WORKDIR /app
COPY --from=build /src/server/target/redlockd-server.jar /app/redlockd-server.jar
USER 10001:10001
# 50051: gRPC (--port). 9464: Prometheus metrics, served when the server runs with --metrics-port 9464.
EXPOSE 50051 9464
# Health/Check, healthy while a quorum of Redis nodes votes. The check reads the server's flags and
# REDLOCKD_* variables from the server process (PID 1, or its child under an init such as
# `docker run --init`), so it finds the port and the TLS files however the container was given
# them. C1 and the serial collector start its short-lived JVM on less CPU; its own --timeout
# leaves that JVM's start room within Docker's. Docker reserves exit code 2, so any failure is
# reported as 1.
HEALTHCHECK --interval=15s --timeout=10s --start-period=30s --retries=3 \
  CMD java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar /app/redlockd-server.jar healthcheck --server-pid 1 --timeout 8s || exit 1
# A forced collection (jcmd GC.run, System.gc()) runs concurrently instead of stopping the server
# for a full one: at 100,000 KeepAlive streams that stop cost 1.9 s of renewals (docs/keepalive.md).
ENTRYPOINT ["java", "-XX:+ExplicitGCInvokesConcurrent", "-jar", "/app/redlockd-server.jar"]
