#!/usr/bin/env bash
# Builds dist/policyctl_VERSION_ARCH.deb with dpkg-deb from `make install` into a staging root.
# Depends only on libyaml-0-2: the Swift runtime is linked statically into policyctl. Swift policies
# (Docs/scripting.md) use /usr/lib/policyctl/libPolicyctlScripting.so and its modules, shipped too; compiling
# one needs the Swift toolchain that built the package, which brings the runtime that library links.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
version=$(sed -n 's/.*tool = "\(.*\)".*/\1/p' Sources/StoragePolicyFileSystem/Base/StoragePolicyVersion.swift)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
make install PREFIX=/usr DESTDIR="$stage/root" >/dev/null
mkdir -p "$stage/root/DEBIAN" "$stage/root/usr/share/doc/policyctl" dist
installed=$(du -sk "$stage/root/usr" | cut -f1)
cat > "$stage/root/DEBIAN/control" <<CONTROL
Package: policyctl
Version: $version
Architecture: $arch
Maintainer: policyctl maintainers <policyctl@localhost>
Depends: libyaml-0-2, libc6, libstdc++6, libgcc-s1
Installed-Size: $installed
Section: admin
Priority: optional
Description: declarative storage policy: plan, apply and audit file hygiene rules
 policyctl plans and applies YAML storage policies (expiry, trash retention, quotas,
 naming, backup exclusion, forbidden files) over a directory tree in one walk, as a
 journaled transaction that can always be recovered.
 .
 Policies written in Swift (a .swift file with custom rules) are compiled against
 /usr/lib/policyctl/libPolicyctlScripting.so; that needs the Swift toolchain that
 built this package (swift.org/install), found on PATH or through POLICYCTL_SWIFTC.
CONTROL
cp README.md "$stage/root/usr/share/doc/policyctl/"
find "$stage/root" -type d -exec chmod 755 {} +
out="dist/policyctl_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$stage/root" "$out" >/dev/null
echo "$out"
