// The bundled app-sandbox policy: a copy of Policies/ios-app-sandbox.yaml, as an app ships it in its binary.
// Keep it byte-for-byte equal to that file (a test checks); never edit one without the other.

enum BundledPolicy {
    /// The YAML text of Policies/ios-app-sandbox.yaml.
    static let iosAppSandbox = #"""
# yaml-language-server: $schema=../Docs/policy.schema.json
#
# The storage layout of a well-run iOS app container (see Docs/policy-reference.md).
# Run it against a copy of an app's data folder (a simulator's, or a device backup):
#   policyctl plan  --policy Policies/ios-app-sandbox.yaml --root path/to/container
#   policyctl apply --policy Policies/ios-app-sandbox.yaml --root path/to/container
version: 1
name: ios-app-sandbox
description: Container layout, tmp expiry, download residue, trash retention, cache quota and naming.

# Never delete more than this in one apply without --max-delete overriding it.
max-delete: 25%

# Directories that must exist. `apply` creates missing ones; `audit` reports them.
layout:
  - path: Documents/UserFiles              # the only folder the in-app file browser shows
  - path: Documents/UserFiles/Download
  - path: Documents/UserFiles/Import
  - path: Documents/ExportTemp             # staging before an export
  - path: Library/Application Support/AppData   # database and private state: never user-visible
  - path: Library/Caches/Thumbnails
    backup: exclude                        # rebuildable: keep it out of backups
    cacheTag: true                         # and tell tar/borg/restic it is a cache
  - path: Library/Caches/Downloading
    backup: exclude
  - path: tmp

rules:
  # tmp is scratch: anything not modified for a day goes, as the app does at launch.
  # (by: newest would also keep files read or whose metadata changed within the day.)
  - name: tmp-expiry
    path: tmp
    expire: { after: 24h }

  # Download libraries leave *.tmp files behind when a transfer dies. The age guard keeps a
  # transfer in flight safe: only residue untouched for an hour is swept.
  - name: download-residue
    path: Documents
    match: ["**/*.tmp", "**/*.download"]
    expire: { after: 1h }

  # Export staging is cleaned regularly.
  - name: export-staging
    path: Documents/ExportTemp
    expire: { after: 7d }

  # Soft-deleted files stay 30 days from the moment they were trashed (never judged by mtime).
  - name: trash-retention
    path: Documents/UserFiles/.Trash
    trash: { retain: 30d }

  # Thumbnails are rebuildable but not free: keep them under 512 MiB, evicting the least
  # recently modified first down to 90% of the cap.
  - name: thumbnail-quota
    path: Library/Caches/Thumbnails
    quota: { max: 512MiB, target: 90%, evict: oldest }

  # Partial downloads older than two weeks will never finish.
  - name: stale-partial-downloads
    path: Library/Caches/Downloading
    expire: { after: 14d }

  # Simulators are case-insensitive, devices are not: keep user text files lowercase
  # (globs are case-sensitive, so the sets catch Notes.TXT too).
  - name: lowercase-names
    path: Documents/UserFiles
    match: ["**/*.[tT][xX][tT]", "**/*.[mM][dD]"]
    exclude: [".Trash/**"]
    naming: { case: lower }

  # Private databases belong in Application Support, never in the user's folder.
  # Audit only: a person decides where the file should go.
  - name: no-private-data-in-user-files
    path: Documents/UserFiles
    forbid: ["**/*.sqlite", "**/*.sqlite-wal", "**/*.sqlite-shm"]
    mode: audit
"""#
}
