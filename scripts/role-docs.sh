#!/usr/bin/env bash
# The variable tables of roles/*/README.md, generated from each role's meta/argument_specs.yml by aar-doc with
# docs/templates/role_variables.md.j2. aar-doc replaces only the text between <!-- BEGIN_ANSIBLE_DOCS --> and
# <!-- END_ANSIBLE_DOCS -->; the rest of each README is written by hand.
#   scripts/role-docs.sh write   regenerate the READMEs (make role-docs)
#   scripts/role-docs.sh check   regenerate into a temporary copy and fail, with the diff, when a README differs (make docs-check)
set -euo pipefail

mode=${1:-write}
case $mode in write | check) ;; *) echo "usage: $0 write|check" >&2; exit 2 ;; esac
template=docs/templates/role_variables.md.j2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0
for spec in roles/*/meta/argument_specs.yml; do
  role=${spec%/meta/argument_specs.yml}
  readme=$role/README.md
  # An internal role (roles/_name, included by other roles only) needs no README; when it has one with the markers,
  # it is generated like the others.
  if [[ ${role#roles/} == _* ]] && ! grep -qsx '<!-- BEGIN_ANSIBLE_DOCS -->' "$readme"; then
    continue
  fi
  if [[ ! -f $readme ]]; then
    echo "$readme: missing (a role with argument specs needs a README with the generated section)" >&2
    failed=1
    continue
  fi
  if ! grep -qx '<!-- BEGIN_ANSIBLE_DOCS -->' "$readme" || ! grep -qx '<!-- END_ANSIBLE_DOCS -->' "$readme"; then
    echo "$readme: add the lines <!-- BEGIN_ANSIBLE_DOCS --> and <!-- END_ANSIBLE_DOCS --> where the variable tables go" >&2
    failed=1
    continue
  fi
  out=$tmp/${role#roles/}.md
  cp "$readme" "$out"
  aar-doc --output-template "$template" --output-file "$out" "$role" markdown
  if cmp -s "$readme" "$out"; then
    continue
  fi
  if [[ $mode == write ]]; then
    cp "$out" "$readme"
    echo "$readme: written"
  else
    diff -u "$readme" "$out" --label "$readme" --label "$readme (from $spec)" || true
    failed=1
  fi
done

if ((failed)) && [[ $mode == check ]]; then
  echo "role READMEs are stale or lack the generated section: run 'make role-docs'" >&2
fi
exit "$failed"
