# Mneme's two commands: `make run` serves the demo on localhost:8080, and
# `make test` runs the whole suite against real servers it starts and stops.
# RUN_DIR: where servers keep pid/port/log files, data and the env file.
# UP_FLAGS: extra flags for scripts/up.sh, e.g. UP_FLAGS=--aof.
RUN_DIR ?= .run/dev
UP_FLAGS ?=

.PHONY: run test test-short chaos fuzz launcher servers-up servers-down

run:
	scripts/run.sh

test:
	scripts/test.sh

# Unit tests only: no servers needed.
test-short:
	go test -short ./...

# The soak-and-chaos run: its own Neo4j, Redis and three replicas under
# load and every fault for CHAOS_DURATION, then once with a broken oracle
# that must fail. make test runs it for two minutes without the Neo4j
# restart, whose recovery still exceeds the 10 s limit on a 2-core machine.
CHAOS_DURATION ?= 2m
chaos:
	go test -tags chaos -count=1 -timeout 60m -run TestChaosRun ./bench/chaos -chaos.duration $(CHAOS_DURATION)

# Every fuzz target for FUZZTIME each, one after the other.
FUZZTIME ?= 10m
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

# Build the embedded Neo4j launcher (no-op when up to date).
launcher:
	scripts/neo4j.sh build

# Start Neo4j + Redis on free loopback ports; writes $(RUN_DIR)/env.
servers-up:
	scripts/up.sh $(RUN_DIR) $(UP_FLAGS)

servers-down:
	scripts/down.sh $(RUN_DIR)
