# layercheck: see README.md. `make demo` runs the lint on the bundled
# samples; `make test` runs every test that needs nothing but this checkout.
SHELL := /bin/bash
GO ?= go
export CGO_ENABLED := 0

# layercheck is the CLI, shipped beside the modules for the monitor role,
# which installs it on the nodes (`layercheck node --textfile`), and for the
# verify role's report, which it draws on the controller (`layercheck report`).
MODULES := inventory_lint node_facts cluster_facts layercheck
ARCHES  := amd64 arm64
# The per-arch binaries live in plugins/bin, not plugins/modules: Ansible
# would take each for a module of its own (ansible-doc -l warnings).
MODULE_BINS := $(foreach m,$(MODULES),$(foreach a,$(ARCHES),plugins/bin/$(m)_linux_$(a)))
VERSION := $(shell awk '/^version:/ {print $$2}' galaxy.yml 2>/dev/null)

# Every go test has an explicit timeout: a hung test fails with its stacks
# instead of running into CI's limit (go's default is 10 minutes per package,
# too short for test/clusterverify on a loaded 2-core machine).
TEST_TIMEOUT ?= 25m
PYTHON ?= python3
# ansible-lint, pinned, in its own venv (not the tests' .venv).
ANSIBLE_LINT_VERSION := 26.10.1
ANSIBLE_LINT_VENV := .venvs/ansible-lint

.PHONY: all build modules demo test test-shared venv venv-precommit collection generate fuzz bench bench-fleet-real vet clean kube-harness prom-harness ssh-deps lint-ansible sanity nodes-up nodes-down test-nodes e2e e2e-cluster e2e-day2

all: build

build: bin/layercheck modules

# Stripped (-s -w) and without local paths (-trimpath); the version from
# galaxy.yml, the commit from git (also when GOFLAGS has -buildvcs=false).
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo ' (modified)')
LDFLAGS := -s -w -X github.com/layercheck/layercheck/internal/app.Version=$(VERSION) -X 'github.com/layercheck/layercheck/internal/app.Commit=$(COMMIT)'

bin/layercheck: FORCE
	$(GO) build -trimpath -ldflags="$(LDFLAGS)" -o $@ ./cmd/layercheck

# The binaries, and playbooks/collections/ansible_collections/layercheck/kubespray
# (git-ignored links), where the checkout's playbooks find the collection.
modules: $(MODULE_BINS)
	./scripts/collection-links.sh

plugins/bin/%: FORCE
	@m=$$(echo $* | sed -E 's/_linux_(amd64|arm64)$$//'); a=$$(echo $* | sed -E 's/.*_//'); \
	  echo "GOOS=linux GOARCH=$$a go build ./cmd/$$m -> $@"; \
	  GOOS=linux GOARCH=$$a $(GO) build -trimpath -ldflags="$(LDFLAGS)" -o $@ ./cmd/$$m

FORCE:

venv:
	./scripts/venv.sh
	./scripts/venv-pinned.sh
	./scripts/venv-series.sh
	./scripts/venv-kubespray.sh
	./scripts/venv-precommit.sh

# pre-commit (pinned) in .venvs/pre-commit, for test/precommit, which runs
# .pre-commit-hooks.yaml the way an inventory repository does.
venv-precommit:
	./scripts/venv-precommit.sh

# The main job on the bundled samples: the clean sample passes, the broken
# one shows every rule (and exits 1, which the demo expects).
demo: bin/layercheck
	bin/layercheck lint -i inventory-samples/kubespray-3node
	@echo
	bin/layercheck lint -i inventory-samples/broken; test $$? -eq 1

# Every test that needs only this checkout (builds, ansible-core venv, real
# servers on loopback are set up by the tests themselves; kube-harness builds
# the kube-apiserver test/clusterverify starts, once).
# scripts/gotest-times.sh prints each package's time at the end.
test: venv modules kube-harness prom-harness ssh-deps
	$(GO) vet ./...
	GO=$(GO) ./scripts/gotest-times.sh -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd test/e2e/images && $(GO) vet ./... && $(GO) test -count=1 -timeout 10m ./...

# Tests that read ../shared (kubespray data, real inventories, node fixtures
# and oracles): corpus and oracle comparisons.
test-shared: venv modules kube-harness prom-harness ssh-deps
	GO=$(GO) ./scripts/gotest-times.sh -count=1 -timeout $(TEST_TIMEOUT) -tags shared ./...
	cd test/e2e/images && $(GO) test -count=1 -timeout 10m -tags shared ./...

# OpenSSH's sshd and sftp-server and sudo, which test/sshverify and
# bench/fleet.sh start on loopback ports (installed with apt-get when
# missing; nothing is done when they are there).
ssh-deps:
	./scripts/ssh-deps.sh

# kube-apiserver for test/clusterverify, built from k8s.io/kubernetes by the
# separate module test/kubeharness into .cache/kube/<version>/ (git-ignored);
# kept when already built (the first build takes minutes).
kube-harness:
	./test/kubeharness/build.sh

# promtool for test/alertrules (`promtool check rules`, `promtool test
# rules` on monitoring/), built from github.com/prometheus/prometheus by the
# separate module test/promharness into .cache/prom/<version>/ (git-ignored);
# kept when already built.
prom-harness:
	./test/promharness/build.sh

generate:
	$(GO) generate ./kubespray/...

# The Galaxy tarball layercheck-kubespray-$(VERSION).tar.gz: galaxy.yml,
# README, LICENSE, meta/, plugins/ with every module binary, roles/,
# playbooks/ (galaxy.yml's build_ignore leaves out the Go sources and tooling).
collection: venv modules
	rm -f layercheck-kubespray-*.tar.gz
	.venv/bin/ansible-galaxy collection build --force .
	@listing=$$(tar tzf layercheck-kubespray-$(VERSION).tar.gz); \
	  for f in $(MODULE_BINS) galaxy.yml meta/runtime.yml playbooks/lint.yml roles/lint/tasks/main.yml roles/monitor/tasks/main.yml monitoring/layercheck.rules.yml monitoring/prometheusrule.yaml; do \
	    case "$$f" in galaxy.yml) f=MANIFEST.json;; esac; \
	    grep -qx "$$f" <<<"$$listing" || { echo "collection: $$f missing from layercheck-kubespray-$(VERSION).tar.gz"; exit 1; }; \
	  done; \
	  for f in $(MODULE_BINS); do \
	    $(GO) version -m "$$f" | grep -q "GOARCH=$${f##*_}\$$" || { echo "collection: $$f is not a $${f##*_} binary"; exit 1; }; \
	  done; \
	  if grep -E '\.go$$|^(cmd|parser|lint|kubespray|verify|internal|module|test)/' <<<"$$listing"; then \
	    echo "collection: Go sources or tests in the tarball (see build_ignore in galaxy.yml)"; exit 1; fi
	@echo "collection: layercheck-kubespray-$(VERSION).tar.gz holds the binaries: $(MODULE_BINS)"

# Every reader of user input under the fuzzer for FUZZTIME each (default
# 30s; CI uses 60s, a release check e.g. FUZZTIME=10m). Not part of `make
# test`. The fuzz cache stays in Go's cache; new crashers land in the
# package's testdata/fuzz/ for review.
FUZZTIME ?= 30s
FUZZ_TIMEOUT ?= 2h
# The kubespray/internal/scan targets read a kubespray checkout's role
# defaults (the lint reads the user's checkout when the inventory lives in
# it); FuzzCertificatePEM adds the private-key reader to FuzzPEM's
# certificate reader.
FUZZ_TARGETS := parser:FuzzINI parser:FuzzYAML parser:FuzzJSONInventory parser:FuzzExtraVars \
	parser:FuzzAnsibleCfg verify/node:FuzzKubeadmConfig verify/node:FuzzEtcdEnv verify/node:FuzzPEM \
	verify/node:FuzzCertificatePEM verify/node:FuzzKubeconfig \
	kubespray/internal/scan:FuzzLoadVarsYAML kubespray/internal/scan:FuzzInferBool
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t#*:}; \
	  echo "fuzz ./$$pkg $$name for $(FUZZTIME)"; \
	  $(GO) test ./$$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -timeout $(FUZZ_TIMEOUT); \
	done

# Benchmarks print figures and ratios; none is asserted in the test suite.
bench: venv build kube-harness ssh-deps
	./bench/inventory.sh
	./bench/node_facts.sh
	./bench/cluster_requests.sh
	./bench/fleet.sh
	./bench/sizes.sh

# bench/fleet.sh's comparison on real node machines (test/nodes/nodes.sh, in
# a lab of their own, torn down at the end): FLEET=10,50,100 machines. Needs
# root; not part of bench, as it boots machines.
FLEET ?= 10,50,100
bench-fleet-real:
	./bench/fleet-real.sh $(FLEET)

# ansible-lint --profile production on the roles, playbooks, galaxy.yml and
# meta/runtime.yml (.ansible-lint says what is left out and why). ansible-lint
# installs the collection it lints into .ansible/ (git-ignored).
lint-ansible: $(ANSIBLE_LINT_VENV)/.ansible-lint-$(ANSIBLE_LINT_VERSION)
	PATH=$(CURDIR)/$(ANSIBLE_LINT_VENV)/bin:$$PATH ansible-lint --nocolor

$(ANSIBLE_LINT_VENV)/.ansible-lint-$(ANSIBLE_LINT_VERSION):
	rm -rf $(ANSIBLE_LINT_VENV)
	$(PYTHON) -m venv $(ANSIBLE_LINT_VENV)
	$(ANSIBLE_LINT_VENV)/bin/pip install --quiet --disable-pip-version-check -c scripts/constraints.txt \
	  'ansible-lint==$(ANSIBLE_LINT_VERSION)' 'ansible-core>=2.19,<2.20'
	touch $@

# ansible-test sanity (ansible-core 2.19, Python 3.11, no containers) on the
# built collection; scripts/sanity.sh says how, and which tests it skips and
# why; tests/sanity/ignore-2.19.txt lists what is left, with reasons.
sanity: collection
	./scripts/sanity.sh

# Node machines for the end-to-end tests (test/nodes/nodes.sh): NODES
# Debian 12 systemd-nspawn machines in a lab network namespace, with sshd,
# a sudo user and an inventory. Needs root; the root filesystem is built
# once into ~/.cache/layercheck/nodes.
NODES ?= 3
nodes-up:
	./test/nodes/nodes.sh up $(NODES)
nodes-down:
	./test/nodes/nodes.sh down
# The harness's own test: two machines up, ssh, sudo, modprobe, up again,
# down leaves nothing (CI runs it; a cold root filesystem takes minutes).
test-nodes:
	$(GO) test -tags nodes -count=1 -timeout 30m ./test/nodes

# kubespray's own roles (boilerplate, facts, preinstall, etcd) run offline on
# three node machines for each release in test/e2e, then verify.yml and
# layercheck verify on the healthy nodes and with breaks seeded; writes
# test/e2e/RESULTS.md. Reads ../shared/kubespray-full; builds etcd and the
# releases' ansible venvs into ~/.cache/layercheck/e2e the first time.
# E2E_RELEASES=v2.31.0 runs one release.
E2E_TIMEOUT ?= 120m
e2e: build
	LAYERCHECK_E2E_RELEASES=$(E2E_RELEASES) $(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v -run 'TestKubesprayEtcdStage' ./test/e2e

# The whole command, offline on three node machines: ansible-playbook
# cluster.yml playbooks/verify.yml (kubespray v2.31.0), then layercheck
# verify --cluster-from first-control-plane, then breaks seeded one at a
# time; writes test/e2e/CLUSTER-RESULTS.md. E2E_CNI=calico (the default)
# runs kubespray's defaults, its inventory/sample with only what this
# machine forces; E2E_CNI=flannel the flannel cluster (results in
# test/e2e/CLUSTER-RESULTS-flannel.md). Builds every binary
# and image from Go modules and ../shared's source trees into
# ~/.cache/layercheck/e2e the first time (long). LAYERCHECK_E2E_KEEP=1
# leaves the nodes running afterwards.
E2E_CLUSTER_TIMEOUT ?= 240m
E2E_CNI ?= calico
e2e-cluster: build
	E2E_CNI=$(E2E_CNI) $(GO) test -tags e2e -count=1 -timeout $(E2E_CLUSTER_TIMEOUT) -v -run 'TestKubesprayCluster' ./test/e2e

# Day 2 on four node machines: kubespray v2.30.0's cluster.yml with
# verify.yml, the preflight (layercheck lint --cluster-from) before each run,
# v2.31.0's upgrade-cluster.yml with verify.yml, scale.yml --limit=node4,
# remove-node.yml, and the traps, each judged by kubespray's own run; writes
# test/e2e/DAY2-RESULTS.md. Builds both releases' binaries and images into
# ~/.cache/layercheck/e2e the first time (long; etcd 3.5.26 from
# ../shared/etcd-src). LAYERCHECK_E2E_KEEP=1 leaves the nodes running.
E2E_DAY2_TIMEOUT ?= 300m
e2e-day2: build prom-harness
	$(GO) test -tags e2e -count=1 -timeout $(E2E_DAY2_TIMEOUT) -v -run 'TestKubesprayDay2' ./test/e2e

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }

clean:
	rm -rf bin $(MODULE_BINS) layercheck-kubespray-*.tar.gz
