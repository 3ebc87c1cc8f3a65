# syntax=docker/dockerfile:1
# Task Agent Slack app: Node 24 LTS on Debian 13 (trixie), no build step (Node runs the
# TypeScript sources directly). Every stage builds on the same base.
ARG NODE_IMAGE=node:24-trixie-slim
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The playground (`docker compose --profile demo up`): the local Slack double with its web page,
# the service simulator and the app in one process, no account needed. It needs the dev tools,
# not the project's own Node (the `node` dev dependency, which only its install script
# downloads): this image has Node 24, and no dependency needs another install script.
FROM ${NODE_IMAGE} AS playground
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY manifest.yml ./
COPY src ./src
COPY tools ./tools
USER node
ENV PLAYGROUND_HOST=0.0.0.0 \
    PLAYGROUND_PORT=8080
EXPOSE 8080
CMD ["node", "tools/playground/main.ts"]

# The app (the default target: the last stage).
FROM ${NODE_IMAGE}
# OCI image labels (https://github.com/opencontainers/image-spec/blob/main/annotations.md). A
# release build names its commit, time and repository:
#   docker build --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ) --build-arg SOURCE=https://… .
ARG NODE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="Task Agent for Slack" \
      org.opencontainers.image.description="Slack app for the Task Execution Service: /task streams an AI agent's answer into a Slack thread." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.base.name="docker.io/library/${NODE_IMAGE}"
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# An init process as PID 1: tini, from Debian. Processes orphaned in the container (a crashed
# Chromium's helpers) are re-parented to PID 1, and node never waits for them: tini reaps them,
# and passes SIGTERM on to node, which closes its own browser as it shuts down. tini is what
# `docker run --init` adds, here inside the image so that every runtime, Kubernetes included,
# has it; dumb-init would do as well, tini is the one Docker itself ships.
RUN apt-get update && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*
# Page previews (generated web pages shown as images) need a browser: `--build-arg WITH_CHROMIUM=1`
# adds Debian's chromium (several hundred MB; see docs/operations.md, "Page previews"). Without it
# they are off.
ARG WITH_CHROMIUM=0
RUN if [ "$WITH_CHROMIUM" = "1" ]; then \
      apt-get update && apt-get install -y --no-install-recommends chromium fonts-liberation \
      && rm -rf /var/lib/apt/lists/*; \
    fi
# The embedded store lives in /data; mount a volume there so threads survive restarts.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
VOLUME ["/data"]
USER node
EXPOSE 3000
# Health is on the internal port when ADMIN_PORT is set (on loopback unless ADMIN_HOST says).
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.ADMIN_PORT||process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The app hands its runs over on SIGTERM and exits 0 (give it more than 15 s to stop).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "src/main.ts"]
