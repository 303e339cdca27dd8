# tollgate: `make run` serves the embedded default policies; `make test` runs every test.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
# tollgate is built and tested with one Go: the release on go.mod's go line
# (go 1.27.3, the newest approved one, which carries the standard library's
# security fixes govulncheck asks for; hack/bench, hack/vuln and hack/lint say
# the same). In its default GOTOOLCHAIN=auto mode a go command older than that
# fetches it from the module proxy once (about 10 s), so a plain go build uses it
# too. The export is still needed: machines whose Go is configured with
# GOTOOLCHAIN=local (ours and CI's are, in $GOROOT/go.env and go env -w) ignore
# go.mod's version and would stop with "go.mod requires go >= 1.27.3"; and it
# keeps make on exactly this release where the local Go is newer. It is read
# from go.mod so that the version lives in one place. The control-plane binaries
# are built with it too: hack/tools pins the same versions of the libraries
# tollgate shares with kube-apiserver (apimachinery, client-go, apiserver,
# golang.org/x/net, ...), so on a fresh machine the build reuses the packages
# make lint and make unit already compiled instead of compiling them again.
export GOTOOLCHAIN := go$(shell awk '$$1=="go"{print $$2; exit}' go.mod)

# Every go command make runs builds alike, so that a package compiled by
# one stage is reused by the next: static (CGO_ENABLED=0) and with paths
# trimmed, as the image's binary is built (hack/image), so that make
# e2e-image and image-test link what make lint compiled instead of
# compiling tollgate's 1,280 packages once more (and the control plane
# shares them too). Only the race detector needs cgo: make unit turns it on
# for its -race runs, a build of its own anyway. Tests find the repository
# from their working directory, not their source path, which -trimpath
# hides. -buildvcs=false is what our machines' go env sets.
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(GOFLAGS) -trimpath -buildvcs=false)

# Control-plane binaries for the end-to-end tests are built from the Go module
# proxy (versions pinned in hack/tools/go.mod) and cached outside the clone,
# keyed by the content of its go.mod and go.sum and the Go release: a fresh
# clone reuses them, a new pin or Go builds new ones. (No file prerequisites:
# a clone has new mtimes.)
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tollgate
TOOLS_KEY := $(shell (cat hack/tools/go.mod hack/tools/go.sum; echo $(GOTOOLCHAIN)) | sha256sum | cut -c1-12)
KUBE_VERSION := $(shell awk '$$1=="k8s.io/kubernetes"{print $$2; exit}' hack/tools/go.mod)
ASSETS := $(CACHE_DIR)/control-plane/$(TOOLS_KEY)
KUBE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitTreeState=clean

VULN_KEY := $(shell cat hack/vuln/go.mod hack/vuln/go.sum | sha256sum | cut -c1-12)
VULN := $(CACHE_DIR)/vuln/$(VULN_KEY)

# staticcheck, pinned in hack/lint/go.mod, cached like govulncheck.
LINT_KEY := $(shell cat hack/lint/go.mod hack/lint/go.sum | sha256sum | cut -c1-12)
LINT := $(CACHE_DIR)/lint/$(LINT_KEY)

# helm, pinned in hack/helm/go.mod, cached like govulncheck.
HELM_KEY := $(shell cat hack/helm/go.mod hack/helm/go.sum | sha256sum | cut -c1-12)
HELM := $(CACHE_DIR)/helm/$(HELM_KEY)
HELM_VERSION := $(shell awk '$$1=="require" && $$2=="helm.sh/helm/v3"{print $$3; exit}' hack/helm/go.mod)

# Kyverno, pinned in hack/kyverno/go.mod, for make peers, which records its
# answers for the differential (test/e2e/kyvernodiff); cached like the
# control plane, keyed by go.mod, go.sum and the Go release (a cold build
# takes about 4 minutes, 12 on a new machine).
KYVERNO_KEY := $(shell (cat hack/kyverno/go.mod hack/kyverno/go.sum; echo $(GOTOOLCHAIN)) | sha256sum | cut -c1-12)
KYVERNO := $(CACHE_DIR)/kyverno/$(KYVERNO_KEY)

# cosign, pinned in hack/cosign/go.mod, for make signatures, which records
# the images it signs and its verdicts (internal/imageverify/imageverifytest/cosign);
# cached like Kyverno.
COSIGN_KEY := $(shell (cat hack/cosign/go.mod hack/cosign/go.sum; echo $(GOTOOLCHAIN)) | sha256sum | cut -c1-12)
COSIGN := $(CACHE_DIR)/cosign/$(COSIGN_KEY)

# The release: the image's tag (make image), the chart's appVersion and
# deploy/'s image tag, which make chart checks agree with it.
VERSION := $(shell cat VERSION)
IMAGE_REPOSITORY ?= ghcr.io/tollgate-dev/tollgate
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: signatures kyverno peers image e2e-image image-test run build test fuzz unit pod-security e2e control-plane lint clean bench fuzz-short vulncheck soak chart e2e-chart audit-scale
.DEFAULT_GOAL := build

run: ## Serve on :8443 with the embedded defaults and a self-signed certificate.
	$(GO) run ./cmd/tollgate serve

build:
	$(GO) build -o bin/tollgate ./cmd/tollgate

# The image, built by hack/image from the module proxy alone: no Docker
# daemon, no base image. bin/image/oci is an OCI layout of both platforms;
# bin/image/tollgate-$(VERSION)-linux-ARCH.tar loads with docker load or
# kind load image-archive; sbom-*.cdx.json list the modules in each binary.
image: ## tollgate's image for linux/amd64 and linux/arm64, reproducible, with SBOMs, in bin/image (docs/deploy.md).
	$(GO) -C hack/image run . -root $(CURDIR) -out $(CURDIR)/bin/image -version $(VERSION) -repository $(IMAGE_REPOSITORY) -platforms $(IMAGE_PLATFORMS)

# The image of this machine's platform alone, which the end-to-end tests
# run (make image builds every platform; image-test the rest).
e2e-image:
	$(GO) -C hack/image run . -root $(CURDIR) -out $(CURDIR)/bin/e2e-image -version $(VERSION) -repository $(IMAGE_REPOSITORY) -platforms linux/$(shell $(GO) env GOARCH)

# Builds the image twice and compares every byte; unpacks it and checks its
# files, config and SBOMs, and runs its binary as 65532 with no other file.
image-test:
	$(GO) -C hack/image test -count=1 ./...

# make test runs its stages through hack/stages, which prints each stage's
# wall time at the end (also when one failed, then the run stops there;
# make -k or KEEP_GOING=1 runs the others too). Stages joined with + run at
# the same time, the first at normal priority and the others at nice 19 in
# the CPU it leaves idle: the end-to-end tests keep about one of our two
# cores idle, waiting on the apiserver, and fuzzing, vulncheck and the Pod
# Security differential fill it. TEST_STAGES='lint chart vulncheck unit
# pod-security fuzz-short e2e e2e-chart image-test' runs each alone.
TEST_STAGES ?= lint chart unit e2e+fuzz-short e2e-chart+vulncheck+pod-security+image-test
test: ## Every test: static checks, the Helm chart, known vulnerabilities, unit tests, the Pod Security differential, short fuzzing, end-to-end against a real apiserver (installed with kustomize, then with the chart).
	@MAKE='$(MAKE)' hack/stages $(TEST_STAGES)

# make test's fuzz-short runs each target on its count of inputs below,
# about 3 minutes for all ten on 2 cores: counted in inputs, not time,
# because a duration ends with a deadline that can catch a worker mid-input
# and fail the run with "context deadline exceeded" (seen once in CI). The
# counts follow the targets' inputs/s there: an input of
# FuzzEvaluateAsReference or FuzzCostBoundHolds runs every library and
# corpus policy, as the reference and directly (36 and 52 inputs/s), the
# decoders' at a thousand or more (FuzzValid 20,000/s). FUZZTIME, when
# set, replaces every count (FUZZTIME=100000x, or a duration).
FUZZTIME ?=
# make fuzz runs each target for FUZZLONG (10 minutes), what a change to
# the evaluator or the decoder runs before it lands (docs/reliability.md);
# not part of make test, so a deadline that ends a run on an input in
# flight ("context deadline exceeded" as the last line, no failing input
# saved) is a rerun, not a finding.
FUZZLONG ?= 10m
# Minimising each new interesting input runs the target up to 60 s by
# default; where an input costs tens of milliseconds that left the fuzzer
# at 0 inputs/s for most of its run. A count bounds it; a failing input is
# saved whether or not it was minimised.
FUZZMINIMIZE ?= 10x
# $(call fuzz,COUNT,TARGET,PACKAGE)
fuzz = $(GO) test -run XXX -fuzztime $(or $(FUZZTIME),$(1)x) -fuzzminimizetime $(FUZZMINIMIZE) -fuzz '^$(2)$$' $(3)
fuzz-short: ## Each fuzz target on its count of inputs (about 3 minutes in all); failures are saved under testdata/fuzz.
	$(call fuzz,10000,FuzzDecode,./internal/admission)
	$(call fuzz,10000,FuzzParse,./internal/policy)
	$(call fuzz,10000,FuzzInject,./internal/inject)
	$(call fuzz,10000,FuzzAnnotations,./internal/inject)
	$(call fuzz,20000,FuzzScan,./internal/jsonscan)
	$(call fuzz,20000,FuzzValid,./internal/jsonscan)
	$(call fuzz,2000,FuzzEvaluateAsReference,./internal/cel)
	$(call fuzz,5000,FuzzLazyValues,./internal/cel/lazy)
	$(call fuzz,2000,FuzzCostBoundHolds,./internal/cel)
	$(call fuzz,5000,FuzzTemplateFromJSON,./internal/engine)

fuzz: ## Each fuzz target for $(FUZZLONG): run before landing a change to the evaluator or the decoder. Not part of make test.
	$(MAKE) --no-print-directory fuzz-short FUZZTIME=$(FUZZLONG)

# hack/checkfiles fails on any file tracked in git (git ls-files, as staged)
# that is a compiled executable or larger than 1 MiB. Executable means the
# content starts with ELF, Mach-O or PE magic bytes, not the exec bit: scripts
# such as .ci/run are meant to have it. Build outputs belong in .gitignore.
# staticcheck runs its default checks, less those staticcheck.conf turns off.
# vet and staticcheck run once, with the e2e tag: no file is built only
# without it, so ./... with the tag is every package and the end-to-end
# tests too.
# hack/bench, a module of its own that make test does not otherwise build,
# is vetted so that make bench cannot break unseen (it had: its go.mod
# lacked the replace directives tollgate's k8s.io/kubernetes import needs).
lint: $(LINT)/staticcheck
	$(GO) run ./hack/checkfiles
	@out=$$(gofmt -l cmd internal test hack); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags e2e ./...
	$(GO) -C hack/bench vet .
	$(LINT)/staticcheck -tags e2e ./...

$(LINT)/staticcheck:
	mkdir -p $(LINT)
	$(GO) -C hack/lint build -o $@.tmp honnef.co/go/tools/cmd/staticcheck
	mv $@.tmp $@

# govulncheck against the Go vulnerability database as of the golang.org/x/vulndb
# version pinned in hack/vuln/go.mod (vuln.go.dev is out of reach of our CI; the
# module proxy serves the same OSV records), indexed once into a local database.
# hack/vulnallow fails on every vulnerable symbol called, apart from the
# advisories hack/vuln/allow.txt lists with a reason (component advisories
# filed against all of k8s.io/kubernetes, which internal/defaulting imports).
# One analysis with the e2e tag: no file is built only without it, so it
# covers every package ./... does and the end-to-end framework too.
vulncheck: $(VULN)/govulncheck $(VULN)/db/index/db.json ## Known vulnerabilities reachable from tollgate's code.
	$(VULN)/govulncheck -db file://$(VULN)/db -format json -tags e2e ./... | $(GO) run ./hack/vulnallow hack/vuln/allow.txt

$(VULN)/govulncheck:
	mkdir -p $(VULN)
	$(GO) -C hack/vuln build -o $@.tmp golang.org/x/vuln/cmd/govulncheck
	mv $@.tmp $@

$(VULN)/db/index/db.json:
	mkdir -p $(VULN)
	$(GO) -C hack/vuln build -o $(VULN)/indexdb golang.org/x/vulndb/cmd/indexdb
	$(GO) -C hack/vuln mod download golang.org/x/vulndb
	rm -rf $(VULN)/db.tmp
	$(VULN)/indexdb -vulns "$$($(GO) -C hack/vuln list -m -f '{{.Dir}}' golang.org/x/vulndb)/data/osv" -out $(VULN)/db.tmp
	rm -rf $(VULN)/db && mv $(VULN)/db.tmp $(VULN)/db

# The Helm chart: helm lint --strict, then test/deploy renders it and deploy/
# (kubectl kustomize) and compares every object field by field, Helm's labels
# aside; and checks the dashboard's and alerts' metric names against what
# tollgate exports.
chart: $(HELM)/helm ## Lint the Helm chart and check it renders what deploy/ does.
	$(HELM)/helm lint --strict deploy/helm/tollgate
	TOLLGATE_HELM=$(HELM)/helm $(GO) test -count=1 ./test/deploy

$(HELM)/helm:
	mkdir -p $(HELM)
	$(GO) -C hack/helm build -ldflags "-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)" -o $@.tmp helm.sh/helm/v3/cmd/helm
	mv $@.tmp $@

# Every package under the race detector but internal/cel, whose tests
# (the differential tests: every corpus policy both ways on every input,
# the cost bound against the tracked cost) evaluate in one goroutine, where
# the detector has nothing to find and made them ten times slower (514 s of
# make test). They run without it; TestConcurrentEvaluate, which evaluates
# shared programs from several goroutines, runs under it too.
CEL_PKG := github.com/tollgate-dev/tollgate/internal/cel
unit:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m $$($(GO) list ./... | grep -vx '$(CEL_PKG)')
	$(GO) test -count=1 -timeout 30m $(CEL_PKG)
	CGO_ENABLED=1 $(GO) test -race -count=1 -run '^TestConcurrentEvaluate$$' $(CEL_PKG)

# The Pod Security policies against Kubernetes' own evaluator on the whole
# corpus (pod-security-admission's fixtures, edge cases, generated Pods);
# make unit compares a sample under the race detector.
PSS_GENERATED ?= 10000
pod-security: ## The library's Pod Security policies decided as k8s.io/pod-security-admission decides, Pod by Pod.
	$(GO) test -count=1 -run 'TestPodSecurity' ./policies -v -pss.generated $(PSS_GENERATED)

# The differentials against other programs (Kyverno; test/e2e/kyvernodiff)
# compare tollgate with the answers make peers recorded in their testdata,
# keyed by the peer's pin, the apiserver's and the requests: make e2e fails
# when any of them changed without a new recording.
e2e: control-plane $(HELM)/helm e2e-image
	KUBEBUILDER_ASSETS=$(ASSETS) TOLLGATE_IMAGE=$(CURDIR)/bin/e2e-image/oci TOLLGATE_HELM=$(HELM)/helm $(GO) test -tags e2e -count=1 -timeout 20m -p 1 -v ./test/e2e/... 2>&1 | tee e2e.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|_test.go:'

kyverno: $(KYVERNO)/kyverno ## Build the pinned Kyverno for the differential (make peers builds it too); prints its path.
	@echo $(KYVERNO)/kyverno

# make peers runs each peer live on its differential's corpus through a real
# apiserver, beside tollgate, and records the peer's answers into the
# differential's testdata (run twice, it writes the same bytes). Run it
# after changing a corpus or a peer's pin; make test does not.
peers: control-plane e2e-image $(KYVERNO)/kyverno ## Run the pinned peers (Kyverno) live and record their answers for make e2e's differentials.
	KUBEBUILDER_ASSETS=$(ASSETS) TOLLGATE_IMAGE=$(CURDIR)/bin/e2e-image/oci TOLLGATE_KYVERNO=$(KYVERNO)/kyverno TOLLGATE_KYVERNO_RECORD=1 $(GO) test -tags e2e -count=1 -timeout 20m -v -run '^TestKyvernoDifferential$$' ./test/e2e/kyvernodiff 2>&1 | tee peers.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|_test.go:'

# make unit decides the recorded cases as cosign did (TestCosignVerdicts);
# this records them again, with the pinned cosign: after a cosign upgrade.
signatures: $(COSIGN)/cosign ## Sign the test images with the pinned cosign and record them and cosign's verdicts.
	TOLLGATE_COSIGN=$(COSIGN)/cosign TOLLGATE_COSIGN_RECORD=1 $(GO) test -count=1 -run '^TestRecordCosign$$' -v ./internal/imageverify

$(COSIGN)/cosign:
	mkdir -p $(COSIGN)
	@echo "building cosign (once; a few minutes)" >&2
	$(GO) -C hack/cosign build -o $@.tmp github.com/sigstore/cosign/v2/cmd/cosign
	mv $@.tmp $@

$(KYVERNO)/kyverno:
	mkdir -p $(KYVERNO)
	@echo "building kyverno (once; a few minutes)" >&2
	$(GO) -C hack/kyverno build -o $@.tmp github.com/kyverno/kyverno/cmd/kyverno
	mv $@.tmp $@

# test/e2e/incluster once more, installed from the Helm chart (helm template,
# applied server-side) instead of kubectl apply -k deploy/: every test that
# depends on what was installed (the objects, RBAC, registration, certificate
# rotation, leader failover, the apiserver's outages, policy reload, the
# background audit's reports, uninstall). Those that do not run in make e2e
# only: TestRollingRestarts (the test's own processes and EndpointSlices,
# restarted with the RBAC TestRBACIsLeast checks in both runs),
# TestMetrics (a replica's metrics page), TestCertManagerOverlayRenders
# and TestChartNonDefaultValuesDryRun (renders, whatever is installed).
E2E_CHART_SKIP := ^(TestRollingRestarts|TestMetrics|TestCertManagerOverlayRenders|TestChartNonDefaultValuesDryRun)$$
e2e-chart: control-plane $(HELM)/helm e2e-image ## The in-cluster end-to-end tests that depend on the install, with tollgate installed from the Helm chart.
	KUBEBUILDER_ASSETS=$(ASSETS) TOLLGATE_IMAGE=$(CURDIR)/bin/e2e-image/oci TOLLGATE_HELM=$(HELM)/helm TOLLGATE_E2E_INSTALL=chart $(GO) test -tags e2e -count=1 -timeout 20m -p 1 -v -skip '$(E2E_CHART_SKIP)' ./test/e2e/incluster 2>&1 | tee e2e-chart.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|_test.go:'

bench: control-plane ## Load benchmark side by side with a floor and a typed webhook; writes bench-results.md.
	KUBEBUILDER_ASSETS=$(ASSETS) $(GO) -C hack/bench run . -root ../.. | tee bench-results.md
	$(GO) test -run XXX -bench . -benchmem ./internal/webhook ./internal/engine ./internal/offline ./internal/references | tee -a bench-results.md

SOAK_DURATION ?= 5m
SOAK_RATE ?= 1000
audit-scale: control-plane ## The background audit over N existing objects (N=5000 by default) in a real kube-apiserver, 20 policies: time to every object evaluated, the leader's memory, idle writes, a change's latency (docs/deploy.md). Not part of make test.
	KUBEBUILDER_ASSETS=$(ASSETS) TOLLGATE_AUDIT_SCALE=$(or $(N),5000) $(GO) test -tags e2e -count=1 -timeout 60m -v -run TestAuditScale ./test/e2e/auditscale 2>&1 | grep -E '^(--- |PASS|FAIL|ok|panic)|_test.go:'

soak: ## $(SOAK_DURATION) at $(SOAK_RATE) reviews/s of every kind, with policy reloads; fails on any error or growing memory; writes soak-results.md. Not part of make test.
	$(GO) -C hack/bench run . -root ../.. -soak $(SOAK_DURATION) -soak-rate $(SOAK_RATE) | tee soak-results.md

control-plane: $(ASSETS)/kube-apiserver $(ASSETS)/etcd

$(ASSETS)/kube-apiserver:
	mkdir -p $(ASSETS)
	@echo "building kube-apiserver $(KUBE_VERSION) (once; a few minutes)"
	$(GO) -C hack/tools build -ldflags '$(KUBE_LDFLAGS)' -o $(ASSETS)/kube-apiserver.tmp k8s.io/kubernetes/cmd/kube-apiserver
	mv $(ASSETS)/kube-apiserver.tmp $@

$(ASSETS)/etcd:
	mkdir -p $(ASSETS)
	$(GO) -C hack/tools build -o $(ASSETS)/etcd.tmp go.etcd.io/etcd/server/v3
	mv $(ASSETS)/etcd.tmp $@

clean:
	rm -rf bin e2e.log e2e-chart.log peers.log bench-results.md soak-results.md
