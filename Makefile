# One entry point for development and CI. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV        := .venv
BIN         := $(VENV)/bin
PY          := python3
COLL_LINK   := .cache/collections/ansible_collections/gpuops/gpu_server
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.cache/collections
export PATH := $(CURDIR)/$(BIN):$(PATH)
export ANSIBLE_FORCE_COLOR := 0
export PY_COLORS := 0
# The platforms the tests run on (tests/images/build.sh builds their images) and the demo's platform.
PLATFORMS   ?= debian12 debian13 ubuntu2204 ubuntu2404 ubuntu2604
PLATFORM    ?= debian12
# site.yml on each of PLATFORMS (site@platform), then every role scenario on Debian 12 (scripts/scenarios.py).
SCENARIOS   ?= $(shell $(PY) scripts/scenarios.py $(PLATFORMS))
MOLECULE_JOBS ?= 2
# pytest-xdist workers of `make unit`
UNIT_JOBS   ?= 2
SANITY_DIR  := /tmp/gpuops-sanity/ansible_collections/gpuops/gpu_server
GET_PIP     := $(HOME)/.ansible/test/cache/get_pip_24_2.py
DEMO_NAME   := gpuops-demo
IMAGE       ?= local/$(PLATFORM):latest

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# Two stamps in one .venv: the demo's part (Ansible), then the test tools on top of it.
# --no-compile: Python compiles a module when it is first imported and keeps it in __pycache__ (.venv is the user's), so
# only what is used is compiled, not the ~40,000 files of the `ansible` bundle: about four times faster from an empty
# pip cache (docs/benchmarks.md).
PIP_INSTALL := $(BIN)/pip install --quiet --disable-pip-version-check --no-compile
$(BIN)/.stamp-demo: requirements-demo.txt
	$(PY) -m venv $(VENV)
	$(PIP_INSTALL) -r requirements-demo.txt
	touch $@

$(BIN)/.stamp: requirements-dev.txt requirements-demo.txt $(BIN)/.stamp-demo
	$(PIP_INSTALL) -r requirements-dev.txt
	touch $@

.PHONY: venv-demo
venv-demo: $(BIN)/.stamp-demo collection-path ## Create .venv with what the demo needs (Ansible, requirements-demo.txt)

.PHONY: venv
venv: $(BIN)/.stamp collection-path ## Create .venv with the pinned toolchain (the demo's part and the test tools)

.PHONY: collection-path
collection-path: ## Link this checkout as gpuops.gpu_server under .cache/collections
	@mkdir -p $(dir $(COLL_LINK))
	@ln -sfn ../../../.. $(COLL_LINK)

.PHONY: host
host: ## Install what the tests need from the distribution, start dockerd and the package cache (root, Debian/Ubuntu)
	bash scripts/setup-host.sh test

.PHONY: host-demo
host-demo: ## Install what the demo needs from the distribution (docker.io, mmdebstrap ...), start dockerd
	bash scripts/setup-host.sh demo

.PHONY: image
image: ## Build the systemd test images of PLATFORMS side by side (each skipped when up to date)
	@mkdir -p build/images
	@printf '%s\n' $(sort $(PLATFORMS) $(PLATFORM)) | xargs -P 4 -I{} bash -c \
	  'bash tests/images/build.sh {} >build/images/{}.log 2>&1 && tail -n 1 build/images/{}.log \
	   || { echo "image {} failed:"; tail -n 40 build/images/{}.log; exit 1; }'

.PHONY: vm-image
vm-image: image ## Build the cached Debian 12 VM image of the storage scenario into .cache/vm (skipped when up to date)
	@mkdir -p build/images
	@bash tests/vm/build.sh >build/images/vm.log 2>&1 && tail -n 1 build/images/vm.log \
	  || { echo "vm image failed:"; tail -n 40 build/images/vm.log; exit 1; }

.PHONY: wheels
wheels: venv-demo ## Download JupyterLab's pinned wheels for the Python of PLATFORMS into .cache/wheels (each kept once complete)
	bash scripts/wheelhouse.sh $(sort $(PLATFORMS) $(PLATFORM))

.PHONY: lint
lint: venv ## yamllint and ansible-lint (production profile)
	$(BIN)/yamllint -s .
	$(BIN)/ansible-lint --profile production

.PHONY: sanity
sanity: venv ## ansible-test sanity on a copy of the collection (offline pip bootstrap)
	@mkdir -p $(dir $(GET_PIP))
	@cp tests/sanity/get_pip_offline.py $(GET_PIP)
	rm -rf $(SANITY_DIR) && mkdir -p $(SANITY_DIR)
	git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C $(SANITY_DIR) -xf -
	cd $(SANITY_DIR) && $(CURDIR)/$(BIN)/ansible-test sanity --requirements --python 3.11 --color no

# The collection's artifact, named by galaxy.yml's version: build/gpuops-gpu_server-<version>.tar.gz, for
# `ansible-galaxy collection install build/gpuops-gpu_server-<version>.tar.gz` (or a requirements.yml `type: file`).
VERSION     = $(shell sed -n 's/^version: *//p' galaxy.yml)
.PHONY: build
build: venv-demo ## Build the collection's tarball, build/gpuops-gpu_server-<galaxy.yml's version>.tar.gz
	@mkdir -p build
	$(BIN)/ansible-galaxy collection build --output-path build --force .
	@test -f build/gpuops-gpu_server-$(VERSION).tar.gz && echo "built build/gpuops-gpu_server-$(VERSION).tar.gz"

# The execution environment (docs/awx.md): ansible-builder, ansible-navigator and ansible-runner on top of the demo's
# part of .venv (requirements-ee.txt).
$(BIN)/.stamp-ee: requirements-ee.txt requirements-demo.txt $(BIN)/.stamp-demo
	$(PIP_INSTALL) -r requirements-ee.txt
	touch $@

.PHONY: venv-ee
venv-ee: $(BIN)/.stamp-ee ## Add ansible-builder, ansible-navigator and ansible-runner to .venv (requirements-ee.txt)

.PHONY: ee
ee: venv-ee build ## Build the execution environment gpuops-ee (ee/execution-environment.yml) from the Debian 12 test image
	$(MAKE) --no-print-directory image PLATFORMS=debian12
	bash scripts/ee.sh

.PHONY: ee-demo
ee-demo: venv-ee ## Run site.yml from the EE against the demo container twice: ansible-navigator, then ansible-runner (after make demo, make ee)
	bash scripts/ee-demo.sh

# The release's notes: antsibull-changelog writes CHANGELOG.rst and changelogs/changelog.yaml from the fragments in
# changelogs/fragments (and removes them, keep_fragments: false) for galaxy.yml's version. Run it once, on main, for a
# release (docs/development.md, Releasing); `antsibull-changelog lint` checks the fragments without writing anything.
.PHONY: release-notes
release-notes: venv-demo ## Write CHANGELOG.rst for galaxy.yml's version from changelogs/fragments (a release: main only)
	$(BIN)/antsibull-changelog lint
	$(BIN)/antsibull-changelog release --version $(VERSION)

.PHONY: galaxy-import
galaxy-import: venv ## Build the artifact and run galaxy-importer on it (as Galaxy does on upload)
	rm -rf build/galaxy && mkdir -p build/galaxy
	$(BIN)/ansible-galaxy collection build --output-path build/galaxy --force .
	@if tar -tzf build/galaxy/*.tar.gz | grep -E '^(molecule|benchmarks|scripts|\.venv|\.ci|\.cache|tests/fixtures)/' ; then \
	  echo "the artifact holds files it must not" >&2; exit 1; fi
	GALAXY_IMPORTER_CONFIG=$(CURDIR)/tests/galaxy-importer.cfg $(BIN)/python -m galaxy_importer.main build/galaxy/*.tar.gz

.PHONY: unit
unit: venv ## pytest: unit tests of the plugins, and the preflight refusals run through ansible-playbook (tests/preflight)
	$(BIN)/python -m pytest tests/unit tests/preflight -q -n $(UNIT_JOBS)

.PHONY: promtool
promtool: venv ## promtool unit tests of the GPU alert rules, and the Grafana dashboards check
	bash tests/promtool/run.sh

.PHONY: molecule
molecule: venv image wheels ## Every Molecule run, MOLECULE_JOBS (2) at a time (SCENARIOS="base site@ubuntu2404" for a few)
	MOLECULE_JOBS=$(MOLECULE_JOBS) bash scripts/molecule-all.sh $(SCENARIOS)

.PHONY: role-docs
role-docs: venv ## Write the variable tables of roles/*/README.md from meta/argument_specs.yml (aar-doc)
	bash scripts/role-docs.sh write

.PHONY: docs-check
docs-check: venv ## Fail when a role README's generated variable tables differ from its argument specs
	bash scripts/role-docs.sh check

.PHONY: docs-lint
docs-lint: venv ## antsibull-docs lint of the collection's plugin and role docs
	$(BIN)/antsibull-docs lint-collection-docs --plugin-docs .

# The docs site: antsibull-docs writes a Sphinx project (conf.py, build.sh) for the collection as installed under
# ANSIBLE_COLLECTIONS_PATH, and its build.sh renders the RST and runs sphinx-build -W. CI has no network: conf.py
# gets no intersphinx inventories, and references into docs.ansible.com are not errors (docs-lint checks ours).
.PHONY: docs
docs: venv ## Build the docs site (antsibull-docs, Sphinx) into build/docs/build/html
	rm -rf build/docs && mkdir -p build/docs
	$(BIN)/antsibull-docs sphinx-init --use-current --squash-hierarchy --fail-on-error \
	  --title 'gpuops.gpu_server' --project 'gpuops.gpu_server' --dest-dir build/docs gpuops.gpu_server
	printf '%s\n' '' 'intersphinx_mapping = {}' "suppress_warnings = ['ref.ref']" >> build/docs/conf.py
	build/docs/build.sh

# The checks before Molecule are single-threaded tools: two run at a time (CHECK_JOBS), each target's output kept
# together (--output-sync), so a 2-core machine finishes them in about half the time. They write to separate places
# (build/galaxy, build/docs, build/artifacts, /tmp/gpuops-sanity).
CHECKS      := lint sanity galaxy-import unit promtool docs-check docs-lint docs
CHECK_JOBS  ?= 2

.PHONY: checks
checks: venv ## Every check but Molecule, CHECK_JOBS (2) at a time
	$(MAKE) --no-print-directory -j $(CHECK_JOBS) --output-sync=target $(CHECKS)

.PHONY: test
# The test images and the wheelhouse (downloads, mmdebstrap and apt, mostly waiting on the network) are made while the
# checks run; Molecule follows. The scenarios in a booted guest are the heavier tier, `make test-vm`.
test: host venv ## Everything CI runs
	$(MAKE) --no-print-directory -j 3 --output-sync=target checks image wheels
	$(MAKE) --no-print-directory molecule
	@echo "all checks passed"

.PHONY: test-vm
test-vm: host venv vm-image ## The scenarios in a booted QEMU guest (storage: mdadm, LUKS, a reboot; 18-35 min, not in make test)
	MOLECULE_JOBS=1 bash scripts/molecule-all.sh $(shell $(PY) scripts/scenarios.py --vm)

.PHONY: test-kernel
test-kernel: host venv image ## The driver's guests booted through OVMF, shim, grub and a signed kernel with Secure Boot on (tests/vm/secureboot.sh debian12, ubuntu2404 and ubuntu2604, TCG; 38 min on 2 cores; not in make test)
	bash tests/vm/secureboot.sh debian12
	bash tests/vm/secureboot.sh ubuntu2404
	bash tests/vm/secureboot.sh ubuntu2604

.PHONY: test-server
test-server: host venv image wheels ## The whole server in a booted Ubuntu 24.04 guest with Secure Boot: site.yml from the built collection over SSH, a re-run, a reboot and what came back, Lynis and CIS in the guest (tests/vm/server.sh; TCG; not in make test)
	bash tests/vm/server.sh

.PHONY: test-extended
test-extended: host venv image wheels ## The role scenarios CI has no room for (scripts/scenarios.py EXTENDED_SCENARIOS and the AMD roles' AMD_RUNS: fleet_upgrade, slurm, training_cluster, backup, spot, pki, docker, the repository scenarios and more); not in make test
	MOLECULE_JOBS=$(MOLECULE_JOBS) bash scripts/molecule-all.sh $(shell $(PY) scripts/scenarios.py --extended)

# Not part of `make test`: a QEMU guest under TCG takes 15-25 min here (tests/vm/README.md).
VM_PLATFORM ?= ubuntu2404
.PHONY: test-vm-ipv6
test-vm-ipv6: venv ## Hardening's SSH part in a QEMU guest booted with ipv6.disable=1 (VM_PLATFORM=ubuntu2404|debian12; slow, not in make test)
	bash tests/vm/ipv6-off.sh $(VM_PLATFORM)

.PHONY: demo
demo: PLATFORMS := $(PLATFORM)
# The platform's own demo variables, where it has some (inventories/demo-platforms: Ubuntu's exact driver versions).
DEMO_VARS = $(wildcard inventories/demo-platforms/$(PLATFORM).yml)
# The image's CMD starts systemd and its label gpuops.cgroupns names the cgroup namespace it needs (private on Ubuntu
# 26.04, whose systemd has no cgroup v1 support: tests/images/build.sh).
# The image (mmdebstrap), and .venv followed by the wheels, are built side by side (demo-deps).
demo: host-demo ## Converge site.yml on a local container (gpuops-demo) of PLATFORM (debian12, debian13, ubuntu2204, ubuntu2404, ubuntu2604)
	@$(MAKE) --no-print-directory -j3 demo-deps PLATFORM=$(PLATFORM) PLATFORMS=$(PLATFORM)
	@if ! docker inspect -f '{{.State.Running}}' $(DEMO_NAME) 2>/dev/null | grep -q true; then \
	  docker rm -f $(DEMO_NAME) >/dev/null 2>&1 || true; \
	  rm -f .cache/facts/*$(DEMO_NAME); \
	  cgroupns=$$(docker image inspect -f '{{ index .Config.Labels "gpuops.cgroupns" }}' $(IMAGE)); \
	  docker run -d --name $(DEMO_NAME) --hostname $(DEMO_NAME) \
	    --cap-add SYS_ADMIN --cap-add NET_ADMIN --cap-add NET_RAW --cap-add MKNOD \
	    --security-opt seccomp=unconfined --security-opt apparmor=unconfined --cgroupns=$$([[ $$cgroupns == private ]] && echo private || echo host) \
	    -v /sys/fs/cgroup:/sys/fs/cgroup:rw -v gpuops-demo-docker:/var/lib/docker -v gpuops-demo-containerd:/var/lib/containerd \
	    -v $(CURDIR)/.cache/wheels/$(PLATFORM):/opt/gpuops-wheels:ro \
	    --tmpfs /run --tmpfs /run/lock --tmpfs /tmp $(IMAGE) >/dev/null; \
	  echo "started container $(DEMO_NAME) from $(IMAGE)"; \
	elif [[ "$$(docker inspect -f '{{.Config.Image}}' $(DEMO_NAME))" != "$(IMAGE)" ]]; then \
	  echo "container $(DEMO_NAME) runs $$(docker inspect -f '{{.Config.Image}}' $(DEMO_NAME)), not $(IMAGE): make demo-clean first" >&2; exit 1; \
	fi
	$(BIN)/ansible-playbook scripts/demo-prepare.yml -i inventories/demo
	$(BIN)/ansible-playbook site.yml -i inventories/demo $(if $(DEMO_VARS),-e @$(DEMO_VARS))
	$(BIN)/ansible-playbook playbooks/summary.yml -i inventories/demo

.PHONY: demo-deps
demo-deps: venv-demo image wheels ## What make demo needs before its container: .venv (the demo's part), the image and the wheels

.PHONY: demo-clean
demo-clean: ## Remove the demo container, its Docker volumes and cached facts (the next demo may run another platform)
	docker rm -f $(DEMO_NAME)
	docker volume rm -f $(DEMO_NAME)-docker $(DEMO_NAME)-containerd >/dev/null
	rm -f .cache/facts/*$(DEMO_NAME)

.PHONY: clean
clean: ## Remove build outputs (keeps .venv and the image)
	rm -rf build tests/output .cache/facts
