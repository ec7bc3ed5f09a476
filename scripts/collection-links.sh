#!/usr/bin/env bash
# Lays out playbooks/collections/ansible_collections/layercheck/kubespray
# (git-ignored) so the checkout's own playbooks find the collection the way
# ansible-playbook looks for it: a collections/ folder beside the playbook.
# It holds links to meta/, plugins/, roles/ and galaxy.yml and to each
# playbook file, never to a folder that contains it, so tools that follow
# links (find -L, ansible-lint, ansible-test) cannot walk in a loop.
# Idempotent and safe to run concurrently: every link is made under a
# temporary name and renamed into place.
set -euo pipefail
cd "$(dirname "$0")/.."
root=playbooks/collections/ansible_collections/layercheck/kubespray
# An older checkout had a link to the whole tree at this path; replace it.
if [ -L "$root" ]; then rm -f "$root"; fi
mkdir -p "$root/playbooks"
link() { # link TARGET NAME: NAME -> TARGET, relative to NAME's folder
  local tmp="$2.tmp.$$"
  ln -sfn "$1" "$tmp"
  mv -Tf "$tmp" "$2"
}
for d in meta plugins roles galaxy.yml; do
  link "../../../../../$d" "$root/$d"
done
for p in playbooks/*.yml; do
  link "../../../../../../$p" "$root/$p"
done
