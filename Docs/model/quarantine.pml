/*
 * The quarantine's protocol (Docs/journal.md, "The quarantine"), beside journal.pml: an apply that holds a delete
 * back (the entry Q renamed into its transaction's quarantine slot, rolled back like a staged delete before the
 * commit), then an undo that puts it back (the rename back, rolled back into the slot before its commit) or a purge
 * that removes it for good (its intent durable before the removal, rolled forward by recovery). Checked
 * exhaustively by Tests/StoragePolicyTests/Safety/ModelCheckTests.swift:
 *
 *     spin -a Docs/model/quarantine.pml && gcc -DSAFETY -o pan pan.c && ./pan    -> errors: 0
 *
 * Two runs race for the lock, each recovering what it finds open, then one applies and the other undoes or
 * purges (whichever the lock gives first); then a `policyctl recover`. Any step of any of them may be a SIGKILL
 * (records not fsynced are kept or lost), MAXCRASH times. The co-tenant may take Q's name once it is free, or
 * replace Q's folder by its own (the path then leads to another inode), at any moment. Then a last recovery, a
 * replay of it, and (when nothing was purged) an undo to completion.
 *
 * Asserted whenever the journal is closed: Q is in exactly one place (its folder, the quarantine) unless a purge's
 * intent was durable; the apply and the undo are each exactly before or after; nothing of the co-tenant's is
 * removed or replaced, and Q never goes into a folder the co-tenant swapped in. At the end: an undo after
 * recovery puts back everything the apply moved.
 *
 * Seeded bugs, each must fail: SEEDED_PURGE_EARLY removes the window before its purge intent is durable;
 * SEEDED_NO_FOLDER_CHECK puts Q back into whatever folder the path leads to; SEEDED_UNDO_EARLY renames Q back
 * before the undo's intent is durable.
 */

#define NONE 0
#define ORIG 1   /* Q, the entry the plan saw */
#define COT  2   /* the co-tenant's entry */

#ifndef MAXCRASH
#define MAXCRASH 3
#endif

byte atQ;            /* what Q's original folder holds under Q's name */
byte slot;           /* the quarantine slot: the engine's 0700 folder, nobody else writes there */
bool goneQ;          /* Q removed for good, by a purge */
bool folderCot;      /* the path to Q's folder now leads to the co-tenant's folder (another inode) */
bool inCotFolder;    /* the engine put Q into the co-tenant's folder */
bool cotAtQ;         /* the co-tenant put its own entry at Q's free name */
bool cotHarmed;      /* the engine removed or replaced a co-tenant's entry */
byte crashes;
bool nocrash;
byte lock;
byte finished;

/* The open transaction (one at a time: the lock). kind: 1 apply, 2 undo, 3 purge. */
byte kind;
bool open, committed;
bool ibuf, idur, sbuf, sdur;
/* What committed: the apply holds Q (`held`), an undo put it back, a purge's intent was durable. */
bool held, undone, purgeIntended;
/* The last undo closed without its commit: it must have left Q where it found it, in the quarantine. */
bool undoRolledBack;

#define CP  if :: (!nocrash && crashes < MAXCRASH) -> crashes++; goto crashed :: true -> skip fi
#define FAIL goto crashed

inline fsync_journal() { atomic { idur = idur || ibuf; sdur = sdur || sbuf } }

inline die() {
    if :: ibuf && !idur -> idur = 1 :: true -> skip fi;
    if :: sbuf && !sdur -> sdur = 1 :: true -> skip fi;
    lock = 0
}

inline begin(k) {
    atomic { open = 1; kind = k; committed = 0; ibuf = 0; idur = 0; sbuf = 0; sdur = 0; undoRolledBack = 0 }
}

/* Apply: the quarantine folder is made after begin; the intent, one fsync; the rename into the slot (of whatever
   has the name), the check there (StepVerifier.recheckQuarantined), a mismatch renamed back; the folders fsynced,
   the commit record. */
inline apply() {
    begin(1);
    CP;
    ibuf = 1; CP;
    fsync_journal();
    CP;
    if
    :: atQ == NONE -> sbuf = 1   /* ENOENT: vanished; skipped */
    :: else -> atomic { slot = atQ; atQ = NONE }
    fi;
    CP;
    if
    :: slot == COT ->
        if :: atomic { atQ == NONE -> atQ = slot; slot = NONE; sbuf = 1 } :: atQ != NONE -> FAIL fi
    :: else -> skip
    fi;
    CP;
    atomic { fsync_journal(); committed = 1; held = (slot == ORIG) };
    CP;
    open = 0;
    check_closed()
}

/* Undo (Undo.planRestore, then the run): its intent durable first; just before the rename, the slot still holds
   Q, the folder the path leads to is the recorded one (not the co-tenant's), Q's name is free; then the rename
   back on the folder checked (RENAME_NOREPLACE). */
inline undo() {
    begin(2);
    CP;
#ifndef SEEDED_UNDO_EARLY
    ibuf = 1; CP;
    fsync_journal();
    CP;
#endif
    if
#ifdef SEEDED_NO_FOLDER_CHECK
    :: slot == ORIG && atQ == NONE -> ok = 1; intoCot = folderCot
#else
    :: slot == ORIG && !folderCot && atQ == NONE -> ok = 1; intoCot = 0
#endif
    :: else -> ok = 0; sbuf = 1
    fi;
    CP;
    if
    :: ok ->
        if
        :: intoCot -> atomic { slot = NONE; inCotFolder = 1 }
        :: atomic { !intoCot && atQ == NONE -> atQ = slot; slot = NONE }
        :: !intoCot && atQ != NONE -> sbuf = 1   /* EEXIST: its name was taken meanwhile; skipped, Q stays held */
        fi
    :: else -> skip
    fi;
    CP;
#ifdef SEEDED_UNDO_EARLY
    ibuf = 1; CP;
#endif
    atomic { fsync_journal(); committed = 1; if :: atQ == ORIG -> undone = 1; held = 0 :: else -> skip fi };
    CP;
    open = 0;
    check_closed()
}

/* Purge (QuarantinePurge.run): the intent durable, then the window removed, the commit, the end. */
inline purge() {
    begin(3);
    CP;
#ifndef SEEDED_PURGE_EARLY
    ibuf = 1; CP;
    fsync_journal();
    purgeIntended = idur;
    CP;
#endif
    atomic { if :: slot == ORIG -> goneQ = 1; slot = NONE :: slot == COT -> cotHarmed = 1; slot = NONE :: else -> skip fi };
    CP;
#ifdef SEEDED_PURGE_EARLY
    ibuf = 1; CP;
    fsync_journal();
    purgeIntended = idur;
    CP;
#endif
    atomic { fsync_journal(); committed = 1; held = 0 };
    CP;
    open = 0;
    check_closed()
}

/* Recovery.run: an uncommitted apply or undo is rolled back by looking at the tree (the entry renamed back only
   while it is the one moved, never replacing: a taken name keeps it where it is); a purge goes forward. */
inline recover() {
    if
    :: !open -> skip
    :: open && kind == 3 ->
        if :: idur -> atomic { purgeIntended = 1; if :: slot == ORIG -> goneQ = 1; slot = NONE :: else -> skip fi; held = 0 } :: else -> skip fi;
        CP;
        open = 0;
        check_closed()
    :: open && kind != 3 && committed -> open = 0; check_closed()
    :: open && kind == 1 && !committed ->
        if
        :: idur && !sdur -> atomic { if :: slot == ORIG && atQ == NONE -> atQ = ORIG; slot = NONE :: else -> skip fi }
        :: else -> skip
        fi;
        CP;
        open = 0;
        check_closed()
    :: open && kind == 2 && !committed ->
        /* looked for by its path: behind a folder the co-tenant swapped in, Q is not found (it stays, safe, in
           its own folder, wherever the co-tenant moved that) */
        if
        :: idur && !sdur -> atomic { if :: atQ == ORIG && slot == NONE && !folderCot -> slot = ORIG; atQ = NONE :: else -> skip fi }
        :: else -> skip
        fi;
        CP;
        atomic { open = 0; undoRolledBack = 1 };
        check_closed()
    fi
}

inline check_closed() {
    assert(!cotHarmed);
    assert(!inCotFolder);
    assert(!cotAtQ || atQ == COT);
    /* Q is in one place, or gone by a durable purge; never both, never lost otherwise */
    assert(goneQ || (atQ == ORIG) != (slot == ORIG));
    assert(!goneQ || purgeIntended);
    /* the apply: held in the quarantine (undone since, or purged), or rolled back to where it was (unless the
       co-tenant took its name while it was away: then it waits in the quarantine, kept) */
    assert(held || undone || goneQ || atQ == ORIG || (cotAtQ && slot == ORIG));
    /* the undo: a rolled-back one left Q in the quarantine */
    assert(!undoRolledBack || slot == ORIG || folderCot);
}

/* The co-tenant: takes Q's free name, or swaps the folder the path leads to for one of its own, once each. */
proctype CoTenant() {
    do
    :: atomic { !nocrash && !cotAtQ && atQ == NONE -> atQ = COT; cotAtQ = 1 }
    :: atomic { !nocrash && !folderCot -> folderCot = 1 }
    :: break
    od
}

proctype Applier() {
    bool ok, intoCot;
    atomic { lock == 0 -> lock = _pid };
    recover();
    if :: atQ == ORIG && slot == NONE && !held -> apply() :: else -> skip fi;
    lock = 0;
    goto done;
crashed:
    die();
done:
    finished++
}

proctype Later() {
    bool ok, intoCot;
    atomic { lock == 0 -> lock = _pid };
    recover();
    if
    :: held && slot == ORIG -> undo()
    :: held && slot == ORIG -> purge()
    :: else -> skip
    fi;
    lock = 0;
    goto done;
crashed:
    die();
done:
    finished++
}

proctype Recoverer() {
    bool ok, intoCot;
    atomic { lock == 0 -> lock = _pid };
    recover();
    lock = 0;
    goto done;
crashed:
    die();
done:
    finished++
}

init {
    bool ok, intoCot;
    byte a, s;
    atQ = ORIG;
    run CoTenant();
    run Applier();
    run Later();
    finished == 2;
    run Recoverer();
    finished == 3;
    nocrash = 1;
    lock == 0;
    recover();
    /* idempotence: recovery replayed on what it left changes nothing */
    atomic { a = atQ; s = slot };
    recover();
    assert(atQ == a && slot == s);
    /* an undo after recovery puts back everything the apply moved (unless purged, or the co-tenant took its name
       or swapped its folder: then it waits in the quarantine) */
    if :: held && slot == ORIG -> undo() :: else -> skip fi;
    assert(goneQ || atQ == ORIG || (slot == ORIG && (cotAtQ || folderCot)) || (cotAtQ && atQ == COT && slot == ORIG));
    assert(!goneQ || purgeIntended);
    goto done;
crashed:
    assert(0);
done:
    skip
}
