// The policy language's JSON Schema, which `policyctl schema` prints and Docs/policy.schema.json holds
// (`policyctl schema > Docs/policy.schema.json` after a change; a test checks the two are the same bytes). What
// every rule shares is written here; each kind's key, alternative and definition come from its
// Policy/Kinds/<Kind>Syntax.swift through RuleKindSchema, so the kinds are listed once, in the registry.
import StoragePolicy

enum PolicySchema {
    /// The schema file's contents (JSON Schema draft-07), final newline included.
    static var fileContents: String { text + "\n" }

    private typealias K = RuleKindSchema

    private static let text = ##"""
{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://raw.githubusercontent.com/example/policyctl/main/Docs/policy.schema.json",
  "$comment": "Mirrors Sources/StoragePolicyModel/Policy/PolicyDecoder.swift, which is the authority; Tests/StoragePolicyTests/Schema checks both agree. Policy files are YAML; editors read this through yaml-language-server.",
  "title": "policyctl storage policy (version 1)",
  "description": "A policyctl storage policy: the directories that must exist under a root and the rules that keep the tree in order. See Docs/policy-reference.md.",
  "type": "object",
  "additionalProperties": false,
  "required": ["version", "name"],
  "properties": {
    "version": {
      "description": "The policy language version. Always 1.",
      "const": 1
    },
    "name": {
      "$ref": "#/definitions/identifier",
      "description": "The policy's name: letters, digits, '-', '_' or '.', at most 128 characters. It names journal entries, plans and scheduler unit files."
    },
    "description": {
      "$ref": "#/definitions/text",
      "description": "One line saying what the policy is for. Shown by tools; has no effect."
    },
    "extends": {
      "description": "Policies this one builds on, in order: bundled policy names (as `policyctl init --list` shows them) or paths to YAML files (with '/' or ending in .yaml/.yml), relative to this file. Their rules and layout come first; a rule of the same name replaces the inherited one; `enabled: false` drops one; top-level keys written here override inherited ones.",
      "anyOf": [
        { "$ref": "#/definitions/policyReference" },
        { "type": "array", "items": { "$ref": "#/definitions/policyReference" } },
        { "type": "null" }
      ]
    },
    "max-delete": {
      "$ref": "#/definitions/deleteLimit",
      "description": "Blast-radius cap: an apply that would delete more than this stops before changing anything. A count (500), a percentage (10%) of the entries scanned under the rules' scopes with a floor of 10, or { percent: 10%, atLeast: 100 } (the larger of the two). `--max-delete` on the command line overrides it. No cap when omitted."
    },
    "quarantine": {
      "description": "How long deletes are held back: the deletes of expire, quota, trash and custom rules become renames into the quarantine on the root's volume (ROOT/.policyctl/quarantine, or ROOT/.policyctl-quarantine-TX with --state-dir), which `policyctl undo TX` puts back and the first apply after the window purges. none (the default): deletes are plain deletes. A rule may set its own, or none.",
      "anyOf": [{ "$ref": "#/definitions/duration" }, { "const": "none" }]
    },
    "journal": {
      "description": "How much of the journal stays whole. Past 16 MiB, an apply moves older transactions' records into gzip history files beside it (journal show and undo still read them): the newest keep transactions, and every one whose quarantine is not purged, stay in the live journal; history past history bytes is removed, oldest first (none: kept).",
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "keep": { "type": "integer", "minimum": 0, "default": 10, "description": "Transactions kept whole in the live journal when it is rotated." },
        "history": { "anyOf": [{ "$ref": "#/definitions/size" }, { "const": "none" }], "default": "256MiB", "description": "The most the history files may hold together; the oldest are removed past it (none: never)." }
      }
    },
    "layout": {
      "description": "Directories that must exist under the root. `apply` creates missing ones; `audit` reports them; a file where a directory must be is a violation, never replaced.",
      "type": ["array", "null"],
      "items": { "$ref": "#/definitions/layoutEntry" }
    },
    "rules": {
      "description": "The rules, each with a name, a scope (path), optional globs and exactly one kind: \##(K.kindList).",
      "type": ["array", "null"],
      "items": { "$ref": "#/definitions/rule" }
    },
    "roots": {
      "description": "Several roots in one policy: each entry names an absolute root (or ~/... for --user runs, expanded from $HOME) and the rules, by name, that apply under it, their paths relative to that root. Without --root, plan and apply run every root in turn, each under its own lock and journal; --root selects one listed root. Roots may not nest, and every rule must be named by some root.",
      "type": ["array", "null"],
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["path", "rules"],
        "properties": {
          "path": { "type": "string", "pattern": "^(/|~/|~$)", "description": "The root: an absolute path, or ~/... under the running user's home (--user runs)." },
          "rules": {
            "description": "The names of the rules that apply under this root.",
            "anyOf": [{ "$ref": "#/definitions/identifier" }, { "type": "array", "items": { "$ref": "#/definitions/identifier" } }]
          }
        }
      }
    },
    "pressure": {
      "description": "Pressure rules: when the root's volume has less free space (statvfs f_bavail) than freeBelow, the named regenerable quota rules evict beyond their limits, in order and oldest first (or each rule's order), until freeUntil, still honouring minAge, keep and max-delete.",
      "type": ["array", "null"],
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "freeBelow", "freeUntil", "evict"],
        "properties": {
          "name": { "$ref": "#/definitions/identifier", "description": "The pressure rule's name (letters, digits, '-', '_', '.'), named in the plan's notes and reasons." },
          "description": { "$ref": "#/definitions/text", "description": "Free text for people; ignored by policyctl." },
          "freeBelow": {
            "description": "Act when the free space is below this: a percentage of the volume (10%) or a size (2GiB).",
            "anyOf": [{ "type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?%$" }, { "$ref": "#/definitions/size" }]
          },
          "freeUntil": {
            "description": "Evict until the free space is at least this (at or above freeBelow): a percentage of the volume or a size.",
            "anyOf": [{ "type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?%$" }, { "$ref": "#/definitions/size" }]
          },
          "evict": {
            "description": "The quota rules that evict, in order, by name; each must say regenerable: true.",
            "type": "array",
            "items": { "$ref": "#/definitions/identifier" }
          }
        }
      }
    }
  },
  "definitions": {
    "text": {
      "description": "Free text (any scalar).",
      "type": ["string", "number", "boolean"]
    },
    "identifier": {
      "description": "An identifier: letters, digits, '-', '_' or '.', 1 to 128 characters.",
      "type": ["string", "number", "boolean"],
      "pattern": "^[A-Za-z0-9._-]{1,128}$"
    },
    "scopePath": {
      "description": "A path relative to --root: no leading '/' or '~', no '..' component, not inside '.policyctl'. '.' is the root itself.",
      "type": ["string", "number", "boolean"],
      "pattern": "^(?![/~])(?!(.*/)?\\.\\.(/|$))(?!(\\./|/)*\\.policyctl(/|$))"
    },
    "layoutPath": {
      "description": "A directory below --root: no leading '/' or '~', no '..' component, not inside '.policyctl', and not the root itself.",
      "type": ["string", "number", "boolean"],
      "pattern": "^(?![/~])(?!(.*/)?\\.\\.(/|$))(?!(\\./|/)*\\.policyctl(/|$))(?!(\\./|/)*\\.?$)"
    },
    "glob": {
      "description": "A glob matched against the scope-relative path: '*' and '?' never cross '/', '**' spans any depth (including none), '[a-z]' and '[!a-z]' (or '[^a-z]') are sets, '{a,b}' alternatives, '\\' escapes. Relative: no leading '/', no '.' or '..' component, no '//'.",
      "type": ["string", "number", "boolean"],
      "pattern": "^(?!/)(?!(.*/)?\\.\\.?(/|$))(?!.*//)."
    },
    "globs": {
      "description": "One glob or a list of globs.",
      "anyOf": [
        { "$ref": "#/definitions/glob" },
        { "type": "array", "items": { "$ref": "#/definitions/glob" } },
        { "type": "null" }
      ]
    },
    "duration": {
      "description": "A duration: numbers with units s, m, h, d (24h) or w (7d), summed without spaces, each unit at most once: 90s, 24h, 7d, 1d12h, 2w.",
      "type": "string",
      "pattern": "^(?!.*s.*s)(?!.*m.*m)(?!.*h.*h)(?!.*d.*d)(?!.*w.*w)([0-9]+[smhdw])+$",
      "examples": ["1h", "24h", "7d", "1d12h", "2w"]
    },
    "size": {
      "description": "A size above zero: a number with a unit B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), such as 512MiB or 1.5GB; a bare integer is bytes.",
      "anyOf": [
        { "type": "integer", "minimum": 1 },
        {
          "type": "string",
          "pattern": "^\\s*(?![0.]*\\s*[A-Za-z]*\\s*$)([0-9]+\\s*(B|kB|[KMGT]i?B)?|([0-9]+\\.[0-9]*|\\.[0-9]+)\\s*(kB|[KMGT]i?B))\\s*$"
        }
      ],
      "examples": ["512MiB", "2GiB", "1.5GB"]
    },
    "quotaTarget": {
      "description": "Where eviction stops: a percentage of max above 0 and at most 100 (90%), or a size at or below max (1.5GiB).",
      "anyOf": [
        { "type": "string", "pattern": "^(?!0*(\\.0*)?%$)(100(\\.0+)?|[0-9]{1,2}(\\.[0-9]+)?)%$" },
        { "type": "integer", "minimum": 0 },
        {
          "type": "string",
          "pattern": "^\\s*([0-9]+\\s*(B|kB|[KMGT]i?B)?|([0-9]+\\.[0-9]*|\\.[0-9]+)\\s*(kB|[KMGT]i?B))\\s*$"
        }
      ],
      "examples": ["90%", "1.5GiB"]
    },
    "deleteLimit": {
      "description": "A count of deletions (500), a percentage, 0 to 100, of the entries scanned under the rules' scopes (10%, which allows at least 10), or { percent: 10%, atLeast: 100 }.",
      "anyOf": [
        { "type": "integer", "minimum": 0 },
        { "type": "string", "pattern": "^([0-9]+|(100(\\.0+)?|[0-9]{1,2}(\\.[0-9]+)?)%)$" },
        {
          "type": "object",
          "additionalProperties": false,
          "required": ["percent"],
          "properties": {
            "percent": {
              "description": "A percentage, 0 to 100, of the entries scanned.",
              "type": "string",
              "pattern": "^(100(\\.0+)?|[0-9]{1,2}(\\.[0-9]+)?)%$"
            },
            "atLeast": {
              "$ref": "#/definitions/count",
              "description": "The floor: this many deletions are always allowed, however small the tree.",
              "default": 10
            }
          }
        }
      ],
      "examples": [500, "10%", { "percent": "25%", "atLeast": 100 }]
    },
    "count": {
      "description": "A whole number, 0 or more.",
      "type": "integer",
      "minimum": 0
    },
    "policyReference": {
      "description": "A bundled policy name (ios-app-sandbox) or a path to a policy file (./team.yaml, relative to this file).",
      "type": "string",
      "pattern": "."
    },
    "retentionUnit": {
      "description": "entry: each selected entry on its own. directory: each direct child folder of the scope is one unit, dated by the newest timestamp inside it and deleted whole; files directly in the scope are units of their own.",
      "enum": ["entry", "directory"],
      "default": "entry"
    },
    "flag": {
      "description": "true or false.",
      "anyOf": [
        { "type": "boolean" },
        { "enum": ["true", "True", "TRUE", "false", "False", "FALSE"] }
      ]
    },
    "trueFlag": {
      "description": "true: false would make the rule do nothing.",
      "anyOf": [
        { "const": true },
        { "enum": ["true", "True", "TRUE"] }
      ]
    },
    "layoutEntry": {
      "description": "A directory (or, with type, a file or symlink) that must exist: its path, or a mapping with path, type, target, content, backup, cacheTag, mode, owner, group and fix.",
      "anyOf": [
        { "$ref": "#/definitions/layoutPath" },
        {
          "type": "object",
          "additionalProperties": false,
          "required": ["path"],
          "properties": {
            "path": {
              "$ref": "#/definitions/layoutPath",
              "description": "The directory, relative to --root (not the root itself)."
            },
            "backup": {
              "description": "exclude: the directory carries the backup-exclusion marker (an extended attribute: user.xdg.robots.backup on Linux, com.apple.metadata:com_apple_backup_excludeItem on Apple systems); apply sets it, audit reports it missing. include: the markers exclude writes (the attribute, and a CACHEDIR.TAG holding exactly the signature) are removed where present; audit reports them. Omitted: markers are left alone.",
              "enum": ["exclude", "include"],
              "default": "include"
            },
            "cacheTag": {
              "$ref": "#/definitions/flag",
              "description": "Also write a CACHEDIR.TAG with the standard signature, honoured by tar, borg and restic. Meant for cache folders, together with backup: exclude.",
              "default": false
            },
            "mode": {
              "description": "The directory's permission bits as a quoted octal string (\"0750\"), as a tmpfiles d line gives them. Apply sets them on a directory it creates; on one that exists only with fix: true (audit reports the drift either way). An unquoted number is an error.",
              "type": "string",
              "pattern": "^[0-7]{3,4}$"
            },
            "owner": {
              "description": "The user that must own the directory: a name (resolved once, when the policy is read) or a uid. Set on a directory apply creates; on one that exists only with fix: true.",
              "type": ["string", "integer"]
            },
            "group": {
              "description": "The directory's group: a name (resolved once, when the policy is read) or a gid. Set on a directory apply creates; on one that exists only with fix: true.",
              "type": ["string", "integer"]
            },
            "type": {
              "description": "What must be at the path, as tmpfiles' d, f and L lines: directory (the default), file (created with content, mode, owner and group when missing) or symlink (created pointing at target). Something else in its place is reported, never replaced.",
              "enum": ["directory", "file", "symlink"],
              "default": "directory"
            },
            "target": {
              "description": "type: symlink only (and required there): what the symlink points to, byte for byte. A symlink pointing elsewhere is reported, never replaced.",
              "type": "string",
              "pattern": "."
            },
            "content": {
              "description": "type: file only: what a file the layout creates holds (at most 64 KiB; empty when omitted). A file holding other content is reported, never rewritten.",
              "type": "string"
            },
            "fix": {
              "$ref": "#/definitions/flag",
              "description": "Repair the mode, owner and group of a directory that exists (never through a symlink; a file or symlink in its place is reported, never replaced). Without it, drift is only reported.",
              "default": false
            }
          }
        }
      ]
    },
    "rule": {
      "description": "A rule: a scope under the root, optional globs that narrow it, and exactly one kind (\##(K.kindList)).",
      "type": "object",
      "additionalProperties": false,
      "required": ["name"],
      "properties": {
        "name": {
          "$ref": "#/definitions/identifier",
          "description": "The rule's name, unique in the policy: letters, digits, '-', '_' or '.'. Findings, plan actions and journal entries carry it. The same name as an inherited rule (see extends) replaces that rule whole."
        },
        "enabled": {
          "$ref": "#/definitions/flag",
          "description": "false drops the rule, and the inherited rule of the same name (see extends); `- name: X` with `enabled: false` alone drops inherited rule X.",
          "default": true
        },
        "description": {
          "$ref": "#/definitions/text",
          "description": "What the rule is for. Has no effect."
        },
        "path": {
          "$ref": "#/definitions/scopePath",
          "description": "The rule's scope, relative to --root ('.' is the root itself). The rule sees only entries below it; globs are matched against paths relative to it."
        },
        "match": {
          "$ref": "#/definitions/globs",
          "description": "Globs selecting the entries the rule applies to, matched against the scope-relative path ('*.tmp' only at the top of the scope, '**/*.tmp' at any depth). Omitted: every entry in the scope."
        },
        "exclude": {
          "$ref": "#/definitions/globs",
          "description": "Globs for entries the rule never applies to, even when match selects them (same syntax as match)."
        },
        "type": {
          "description": "Which entry types the rule considers: file (regular files), directory, symlink or any. Omitted: the kind's own default.",
          "enum": ["file", "directory", "symlink", "any"]
        },
        "mode": {
          "description": "enforce: plan and apply the rule's changes. audit: report what it would change as findings and never change anything.",
          "enum": ["enforce", "audit"],
          "default": "enforce"
        },
        "severity": {
          "description": "Severity of the rule's findings: note, warning or error. Omitted: error for forbid and backup, warning for the other kinds.",
          "enum": ["note", "warning", "error"]
        },
        "regenerable": {
          "description": "true: what the rule evicts can be fetched or rebuilt again, so pressure rules may name it. Pressure never evicts through a rule without it.",
          "type": "boolean",
          "default": false
        },
        "quarantine": {
          "description": "This rule's own quarantine window for its deletes, or none for plain deletes; omitted: the policy's quarantine. Rules that delete only (expire, quota, trash, custom).",
          "anyOf": [{ "$ref": "#/definitions/duration" }, { "const": "none" }]
        },
        "inUse": {
          "description": "\##(K.inUseList) rules only. skip: keep (and report) an entry that is open in some process or holds a BSD flock; for a directory, anything open inside it keeps it. ignore: delete it all the same.",
          "enum": ["skip", "ignore"],
          "default": "skip"
        },
\##(EntryFilterSchema.properties)
\##(K.properties)
      },
      "oneOf": [
\##(K.alternatives)
        {
          "description": "`- name: X` with `enabled: false` and nothing else drops inherited rule X.",
          "required": ["enabled"],
          "not": { "anyOf": [{ "required": ["path"] }, \##(K.anyKindRequired)] }
        }
      ]
    },
\##(K.definitions)
  }
}
"""##
}
