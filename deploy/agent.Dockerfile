# syntax=docker/dockerfile:1
#
# The agent image for LEASHD_SANDBOX=docker: leashd starts each chat's agent
# in a container of this image. Build it on the machine leashd's Docker
# daemon runs on:
#
#   docker build -t leashd-agent -f deploy/agent.Dockerfile deploy/
#
# and set LEASHD_SANDBOX_IMAGE=leashd-agent (the default). It holds what an
# agent needs to work in a repository: Node, the Claude Code CLI, the Claude
# ACP adapter (LEASHD_AGENT=acp, LEASHD_ACP_COMMAND=claude-agent-acp), git,
# bash and the usual tools. It holds no leashd and no secret.
#
# leashd decides the rest when it starts a container: the agent's program as
# the entrypoint (so no ENTRYPOINT or CMD here), leashd's own uid:gid (so no
# USER: files written in the mounted working directory keep their owner),
# a read-only root, HOME the mounted home, no capabilities.
#
# The versions must match .ci/versions.env (deploy/agent_dockerfile_test.go
# checks them).

ARG CLAUDE_CODE_VERSION=2.1.332
ARG CLAUDE_AGENT_ACP_VERSION=0.101.0

FROM node:22-slim AS agent
ARG CLAUDE_CODE_VERSION
ARG CLAUDE_AGENT_ACP_VERSION
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates git bash procps less ripgrep openssh-client \
 && rm -rf /var/lib/apt/lists/* \
 && npm install -g @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} \
      @agentclientprotocol/claude-agent-acp@${CLAUDE_AGENT_ACP_VERSION} \
 && npm cache clean --force \
 && claude --version
# The image is never updated in place: leashd's operator rebuilds it.
ENV SHELL=/bin/bash \
    LANG=C.UTF-8 \
    DISABLE_AUTOUPDATER=1
WORKDIR /tmp
