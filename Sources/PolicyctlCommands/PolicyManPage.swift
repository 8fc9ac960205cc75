// policyctl-policy(5): the policy language as a manual page. Docs/policy-reference.md is the long form;
// this page is the reference a terminal user reaches with `man policyctl-policy`.

enum PolicyManPage {
    static func text(version: String, date: String) -> String {
        #"""
        .TH POLICYCTL-POLICY 5 "\#(date)" "policyctl \#(version)" "File Formats"
        .SH NAME
        policyctl\-policy \- the storage policy language of policyctl
        .SH SYNOPSIS
        .nf
        version: 1
        name: \fIidentifier\fR
        description: \fItext\fR
        max\-delete: \fIcount\fR | \fIpercent\fR%
        layout:
          \- path: \fIdir\fR
            backup: exclude | include
            cacheTag: true | false
        rules:
          \- name: \fIidentifier\fR
            path: \fIscope\fR
            match: [\fIglob\fR, ...]
            exclude: [\fIglob\fR, ...]
            type: file | directory | symlink | any
            mode: enforce | audit
            severity: error | warning | note
            inUse: skip | ignore
            \fIkind\fR: \fIsettings\fR
        .fi
        .SH DESCRIPTION
        A policy is a YAML file stating the directories that must exist under a root and the rules
        that keep the tree tidy.
        .BR policyctl (1)
        evaluates every rule in one walk of the root.
        Every path in a policy is relative to the root given with \fB\-\-root\fR; absolute paths and
        \fB..\fR are refused when the policy is loaded.
        .SH RULE KINDS
        Each rule has exactly one kind.
        .TP
        .B expire: { after: DURATION, by: mtime | atime | ctime | newest }
        Delete entries older than \fBafter\fR, judged by the timestamp \fBby\fR names (default mtime;
        \fBnewest\fR is the newest of atime, mtime, btime where recorded and, for files, ctime).
        A directory is removed only when it is left empty and is itself expired.
        \fBexpire: 24h\fR is short for \fBexpire: { after: 24h }\fR.
        .TP
        .B trash: { retain: DURATION, layout: auto | freedesktop | app }
        Delete items that have been in the trash folder longer than \fBretain\fR, measured from when they
        were trashed: the DeletionDate of a FreeDesktop \fIinfo/NAME.trashinfo\fR, else the time
        \fBpolicyctl trash\fR recorded, else ctime; never mtime.
        .TP
        .B quota: { max: SIZE, target: SIZE | PERCENT%, evict: oldest | lru }
        When the regular files under the scope take more than \fBmax\fR (allocated bytes, as \fBdu\fR),
        evict the oldest (mtime) or least recently used (atime) first until the total is at or below
        \fBtarget\fR (default 100% of max). Ties break by path.
        .TP
        .B naming: { case: lower, pattern: REGEX }
        \fBcase: lower\fR renames names to lowercase; a taken name becomes \fIname (2).ext\fR.
        Names that differ only by case are reported. Names that do not match \fBpattern\fR in full are
        reported, never renamed.
        .TP
        .B backup: exclude | { exclude: true, cacheTag: BOOL }
        The scope carries the backup\-exclusion marker (the xattr \fBuser.xdg.robots.backup\fR=false on
        Linux, \fBcom.apple.metadata:com_apple_backup_excludeItem\fR on Apple systems), and with
        \fBcacheTag\fR a \fICACHEDIR.TAG\fR.
        .TP
        .B forbid: [GLOB, ...]
        Entries that must not exist. In audit mode they are reported; in enforce mode they are moved into
        the policy's trash folder (the first trash rule's path), never deleted.
        .SH ENTRIES IN USE
        Expire, quota and trash rules never delete an entry that is open in some process (read from
        \fI/proc/*/fd\fR once per run) or holds a BSD \fBflock\fR (probed as systemd\-tmpfiles does); a
        directory is kept when anything inside it is open. Such entries are reported as skipped,
        \fIin use by PID (command)\fR, at plan and again just before each delete at apply. Root sees every
        process, other users only their own. \fBinUse: ignore\fR on the rule turns this off.
        .SH GLOBS
        \fB*\fR matches any run of characters but \fB/\fR; \fB?\fR one character; \fB**\fR any number of
        path components, including none; \fB[abc]\fR, \fB[a\-z]\fR and \fB[!abc]\fR a set;
        \fB{a,b}\fR alternatives; \fB\e\fR escapes. Globs match the scope\-relative path, byte for byte,
        so names that are not UTF\-8 work too; \fB*\fR matches dotfiles.
        .SH DURATIONS AND SIZES
        Durations are numbers with units \fBs m h d w\fR, summed without spaces: \fB90s\fR, \fB24h\fR,
        \fB1d12h\fR, \fB2w\fR. Sizes take \fBB\fR, \fBKB MB GB TB\fR (powers of 1000) or
        \fBKiB MiB GiB TiB\fR (powers of 1024): \fB512MiB\fR, \fB1.5GB\fR.
        .SH PRECEDENCE
        A deleted entry gets no other action; a deleted directory covers its contents; renames and moves
        to the trash come next; backup markers are independent.
        .SH EXAMPLE
        .nf
        version: 1
        name: app\-sandbox
        rules:
          \- name: tmp\-expiry
            path: tmp
            expire: { after: 24h }
        .fi
        .SH SEE ALSO
        .BR policyctl (1)

        """#
    }
}
