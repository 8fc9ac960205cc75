/*
 * The apply journal's protocol, as the engine runs it (Docs/journal.md, "The model" maps each step to the
 * code). Checked exhaustively by Tests/StoragePolicyTests/Safety/ModelCheckTests.swift:
 *
 *     spin -a Docs/model/journal.pml && gcc -DSAFETY -o pan pan.c && ./pan      -> errors: 0
 *     spin -DSEEDED_BUG -a Docs/model/journal.pml ...                           -> errors: 1 (the old bug)
 *
 * The tree: F, a file a rule deletes (a roll-forward unlink, a unit of one); D, a trash item that is a folder,
 * and I, its .trashinfo: one unit of two entries, both staged; M, an entry a forbid rule moves to T in the trash
 * with the record R it writes (create, then rename: one unit, in the moves' group before the deletes). The
 * co-tenant can put its own entry at a planned name at any moment (replacing the entry, or taking a freed or
 * destination name), MAXSWAP times. Two runs race for the lock; each recovers what it finds open, plans from
 * the tree as it is, and applies; then a `policyctl recover` runs. Any of them may be killed at every step
 * (SIGKILL: the lock goes, journal records not yet fsynced are each kept or lost), so a crash of the apply, of
 * the recovery of it and of the recovery of that can follow each other (MAXCRASH). Then a last recovery, a
 * replay of it (idempotence), and a clean re-apply (convergence).
 *
 * Asserted whenever the journal is closed: every unit is exactly as before or exactly as after; a file delete
 * whose intent was durable and not skipped is finished; nothing is half-done (staging holds only what a
 * rollback could not put back because the co-tenant took its name); the engine never removed a co-tenant's
 * entry. At the end: a re-apply reaches the uninterrupted result.
 *
 * SEEDED_PURGE purges staging before the commit record: a crash between them loses the staged folder while
 * the rollback puts its .trashinfo back.
 *
 * SEEDED_BUG is the design before units (issue 32): the .trashinfo is its own action, deleted roll-forward
 * (and first: deletes run deepest path first, info/ after files/ in reverse order), while the folder is
 * staged. A crash before the commit then finishes the .trashinfo and puts the folder back: split.
 */

#define NONE 0
#define ORIG 1   /* the entry the plan saw (its identity) */
#define COT  2   /* the co-tenant's entry: another identity */

#define F 0
#define D 1
#define I 2
#define N 3

#ifndef MAXCRASH
#define MAXCRASH 3
#endif

/* The co-tenant's acts in one run of the model (each on another name). 1 keeps pan to a few seconds;
   -DMAXSWAP=2 checks every pair of them too (about 5 million states, ten seconds). */
#ifndef MAXSWAP
#define MAXSWAP 1
#endif

#ifdef SEEDED_BUG
#define I_ROLLS_FORWARD 1
#else
#define I_ROLLS_FORWARD 0
#endif

/* A forbid move (Docs/journal.md, "Units of change"): the entry at M goes to T in the trash with the record R
   the engine writes (create of the .trashinfo, then rename). Its own group, before the deletes (phases). */
#define ENG 1        /* R holds the record this transaction wrote */
byte atM, atT, rec;
bool mcbuf, mcdur, mrbuf, mrdur, msbuf, msdur;   /* create and rename intents, the move's skip record */
bool plannedM, swappedM, keptM;
bool cotAt[N], cotM, cotT, cotRec;   /* the co-tenant put its own entry there: nothing of the engine's may remove it */

byte at[N];          /* what is at each planned path now */
byte staged[N];      /* what the open transaction's staging folder holds under the member's staged name */
bool gone[N];        /* the entry the plan saw was deleted (unlinked, or purged from staging) */
bool kept[N];        /* a rollback could not put it back (its name was taken): it waits in staging */
bool swapped[N];     /* the co-tenant acted on this path */
bool cotHarmed;      /* the engine removed a co-tenant's entry */
bool planned[N];     /* the current run's plan */
bool unitI;          /* I's intent is the unit's second change (a stage under D's action), not its own action */
bool cotDone;        /* the co-tenant has stopped (before the last recovery and the re-apply) */
byte crashes;
byte swaps;
bool nocrash;        /* the last recovery and the re-apply run to completion */
byte lock;           /* pid of the run holding the root's flock; 0 when free */

/* The journal of the open transaction: begin (open), intents and skip records written (buf) and durable
   (dur), commit (durable when written: it is fsynced at once). */
bool open, committed;
bool ibuf[N], idur[N];
bool sbuf[N], sdur[N];

/* A crash point: the process may be killed here (SIGKILL). */
#define CP  if :: (!nocrash && crashes < MAXCRASH) -> crashes++; goto crashed :: true -> skip fi
/* A run-level error (EEXIST putting an entry back, ...): the run rolls back with the code recovery uses,
   from what is durable; modelled as a death, which allows every subset of unflushed records. */
#define FAIL goto crashed

/* An fsync of the journal: every record written so far is durable. */
inline fsync_journal() {
    atomic { i = 0; do :: i < N -> idur[i] = idur[i] || ibuf[i]; sdur[i] = sdur[i] || sbuf[i]; i++ :: else -> break od;
             mcdur = mcdur || mcbuf; mrdur = mrdur || mrbuf; msdur = msdur || msbuf }
}

/* What SIGKILL leaves: each record written but not fsynced is on disk or not (any subset: page writeback has
   no order). The kernel releases the flock. */
inline die() {
    i = 0;
    do
    :: i < N ->
        if :: ibuf[i] && !idur[i] -> idur[i] = 1 :: true -> skip fi;
        if :: sbuf[i] && !sdur[i] -> sdur[i] = 1 :: true -> skip fi;
        i++
    :: else -> break
    od;
    if :: mcbuf && !mcdur -> mcdur = 1 :: true -> skip fi;
    if :: mrbuf && !mrdur -> mrdur = 1 :: true -> skip fi;
    if :: msbuf && !msdur -> msdur = 1 :: true -> skip fi;
    lock = 0
}

/* A skip record for member m's action (buffered: not flushed on its own); a unit's members share one action. */
inline skip_action(m) {
    if
    :: (m == D && unitI) || (m == I && unitI) -> sbuf[D] = 1; sbuf[I] = 1
    :: else -> sbuf[m] = 1
    fi
}

/* Roll-forward unlink: the worker's fstatat (identity, type, mount) and unlinkat, one right after the other on
   the folder's descriptor. Their one-system-call window is the documented limit of roll-forward (Docs/journal.md,
   "What roll-forward gives up"); it is the only place the model makes two calls one step. */
inline unlink_checked(m) {
    atomic {
        if
        :: at[m] == ORIG -> at[m] = NONE; gone[m] = 1
        :: else -> skip_action(m)
        fi
    }
}

/* Rename into staging (renameat2 of whatever has the name now), then the check in staging, where nothing can
   swap it: not what the plan saw -> renamed back (RENAME_NOREPLACE). Returns ok = 0 when refused. */
inline stage_checked(m) {
    if
    :: at[m] == NONE -> ok = 0   /* ENOENT: vanished meanwhile */
    :: else -> atomic { staged[m] = at[m]; at[m] = NONE }
    fi;
    CP;
    if
    :: ok && staged[m] != ORIG ->
        ok = 0;
        if :: atomic { at[m] == NONE -> at[m] = staged[m]; staged[m] = NONE } :: at[m] != NONE -> FAIL fi
    :: else -> skip
    fi
}

inline unstage(m) {
    if
    :: atomic { staged[m] != NONE && at[m] == NONE -> at[m] = staged[m]; staged[m] = NONE }
    :: staged[m] != NONE && at[m] != NONE -> FAIL   /* Transaction.unstage throws EEXIST: the run rolls back */
    :: staged[m] == NONE -> skip
    fi
}

/* Planning reads the tree: F when it is the old file; the unit when the folder is dated by its .trashinfo; an
   orphaned .trashinfo (no item) alone. An undated item (no .trashinfo) is never planned: it would stay forever. */
inline plan() {
    planned[F] = (at[F] == ORIG);
    planned[D] = (at[D] == ORIG && at[I] == ORIG);
    planned[I] = (at[I] == ORIG);
    plannedM = (atM == ORIG);
    unitI = planned[D] && planned[I] && !I_ROLLS_FORWARD
}

/* Apply: ApplyRun.run. begin, intents of the group, one fsync, check and change per step, commit, purge, end. */
inline apply() {
    /* begin (Transaction.begin, fsynced), then the staging folder */
    atomic { open = 1; committed = 0; i = 0;
             do :: i < N -> ibuf[i] = 0; idur[i] = 0; sbuf[i] = 0; sdur[i] = 0; staged[i] = NONE; kept[i] = 0; i++ :: else -> break od;
             mcbuf = 0; mcdur = 0; mrbuf = 0; mrdur = 0; msbuf = 0; msdur = 0; keptM = 0 }
    CP;
    /* the moves' group: a forbid move is the create of its record then the rename (ApplyRun.prepareTrash) */
    if
    :: plannedM ->
        mcbuf = 1; CP; mrbuf = 1; CP;
        fsync_journal();
        CP;
        /* the source's identity, and the destination free, just before (ApplyRun.verify) */
        if :: atM == ORIG && atT == NONE -> ok = 1 :: else -> ok = 0; msbuf = 1 fi;
        CP;
        if
        :: ok ->
            /* the record: temp file, fsync, rename no-replace (Transaction.writeFile) */
            if :: atomic { rec == NONE -> rec = ENG } :: rec != NONE -> ok = 0; msbuf = 1 fi;
            CP;
            if
            :: ok ->
                /* rename no-replace: whatever has the name now moves; ENOENT or EEXIST put the record back first
                   (ApplyRun.settle -> Transaction.revert), then the skip */
                if
                :: atomic { atM != NONE && atT == NONE -> atT = atM; atM = NONE }
                :: atM == NONE || atT != NONE -> atomic { if :: rec == ENG -> rec = NONE :: else -> skip fi }; msbuf = 1
                fi;
                CP
            :: else -> skip
            fi
        :: else -> skip
        fi
    :: else -> skip
    fi;
    /* the group's intents, in op order (ApplyRun.runGroup -> Transaction.intend), then one fsync */
#ifdef SEEDED_BUG
    if :: planned[I] -> ibuf[I] = 1 :: else -> skip fi; CP;
#endif
    if :: planned[F] -> ibuf[F] = 1 :: else -> skip fi; CP;
    if :: planned[D] -> ibuf[D] = 1 :: else -> skip fi; CP;
#ifndef SEEDED_BUG
    if :: planned[I] -> ibuf[I] = 1 :: else -> skip fi; CP;   /* the unit's second change, or an orphan alone */
#endif
    fsync_journal();
    CP;
    /* carry out, in step order */
#ifdef SEEDED_BUG
    if :: planned[I] -> unlink_checked(I); CP :: else -> skip fi;
#endif
    if :: planned[F] -> unlink_checked(F); CP :: else -> skip fi;
    if
    :: planned[D] ->
        /* verifyDelete(item) and verifyRecord: both identities just before the change */
        if
        :: at[D] == ORIG && (I_ROLLS_FORWARD || at[I] == ORIG || at[I] == NONE) -> ok = 1
        :: else -> ok = 0; skip_action(D)
        fi;
        CP;
        if
        :: ok ->
            stage_checked(D);
            if :: !ok -> skip_action(D) :: else -> skip fi;
            CP
        :: else -> skip
        fi;
#ifndef SEEDED_BUG
        if
        :: ok ->
            if
            :: at[I] == NONE -> skip   /* the record vanished meanwhile: the item goes alone, the unit's after */
            :: else ->
                stage_checked(I);
                if :: !ok -> unstage(D); skip_action(D) :: else -> skip fi
            fi;
            CP
        :: else -> skip
        fi
#endif
    :: else -> skip
    fi;
#ifndef SEEDED_BUG
    if :: planned[I] && !unitI -> unlink_checked(I); CP :: else -> skip fi;   /* an orphan .trashinfo */
#endif
    /* the folders are fsynced, then commit is written and fsynced (Transaction.commit) */
#ifdef SEEDED_PURGE
    purge();   /* the other seeded bug: staging purged before the commit record */
    fsync_journal();
    committed = 1;
    CP;
#else
    fsync_journal();
    committed = 1;
    CP;
    purge();
#endif
    open = 0;   /* end */
    check_closed()
}

/* Transaction.purge / Recovery.finishPurge: everything staged goes, through descriptors. */
inline purge() {
    i = 0;
    do
    :: i < N ->
        atomic { if :: staged[i] == COT -> cotHarmed = 1 :: staged[i] == ORIG -> gone[i] = 1 :: else -> skip fi; staged[i] = NONE };
        CP;
        i++
    :: else -> break
    od
}

/* Recovery.run: committed -> finish the purge; else Rollback.run over the durable intents of unskipped actions,
   newest first: an unlink goes forward (only on the recorded identity; never of an action holding another
   change, Recovery.unitsRolledBack), a stage goes back (RENAME_NOREPLACE; a taken name keeps it). */
inline recover() {
    if
    :: !open -> skip
    :: open && committed -> purge(); open = 0; check_closed()
    :: open && !committed ->
        /* reverse op order: the unit's record, the item, then F (seeded: D, F, I), then the move */
#ifndef SEEDED_BUG
        if :: idur[I] && !sdur[I] -> rollback_one(I) :: else -> skip fi; CP;
#endif
        if :: idur[D] && !sdur[D] -> rollback_one(D) :: else -> skip fi; CP;
        if :: idur[F] && !sdur[F] -> rollback_one(F) :: else -> skip fi; CP;
#ifdef SEEDED_BUG
        if :: idur[I] && !sdur[I] -> rollback_one(I) :: else -> skip fi; CP;
#endif
        /* the move's rename back, only of the entry it moved, never replacing; then its record, only if it is
           exactly what was written (Rollback.undo .rename, .create) */
        if
        :: mrdur && !msdur ->
            atomic { if :: atT == ORIG && atM == NONE -> atM = ORIG; atT = NONE :: atT == ORIG && atM != NONE -> keptM = 1 :: else -> skip fi }
        :: else -> skip
        fi;
        CP;
        if :: mcdur && !msdur -> atomic { if :: rec == ENG && !keptM -> rec = NONE :: else -> skip fi } :: else -> skip fi;
        CP;
        open = 0;   /* end: rolled-back, or partially rolled back when a file delete stayed done */
        check_closed()
    fi
}

inline rollback_one(m) {
    if
    :: (m == F || (m == I && !unitI)) ->
        /* an unlink: finished when the entry is still exactly the recorded one */
        atomic { if :: at[m] == ORIG -> at[m] = NONE; gone[m] = 1 :: else -> skip fi }
    :: else ->
        atomic {
            if
            :: staged[m] != NONE && at[m] == NONE -> at[m] = staged[m]; staged[m] = NONE; kept[m] = 0
            :: staged[m] != NONE && at[m] != NONE -> kept[m] = 1   /* a kept record names it; never purged */
            :: else -> skip
            fi
        }
    fi
}

/* The sentence of Docs/journal.md, whenever no transaction is open. */
inline check_closed() {
    /* nothing outside the plan is changed: the co-tenant's entries are where it put them. Its entry renamed over
       a forbidden name is moved into the trash with a record, as a file it created under that name would be:
       the rule matches names, and it is kept, not deleted, for the rule's retention. */
    assert(!cotHarmed);
    assert(!cotAt[F] || at[F] == COT);
    assert(!cotAt[D] || at[D] == COT);
    assert(!cotAt[I] || at[I] == COT);
    assert(!cotT || atT == COT);
    assert(!cotRec || rec == COT);
    assert(!cotM || atM == COT || atT == COT);
    /* the unit {D, I}: exactly before or exactly after (unless the co-tenant acted on one of its names) */
    assert(swapped[D] || swapped[I] || (at[D] == ORIG && at[I] == ORIG) || (gone[D] && gone[I]));
    /* file deletes are finished: a durable intent without a skip record means the file is gone */
    assert(swapped[F] || !idur[F] || sdur[F] || gone[F]);
    /* the forbid move: exactly not moved and no record, or moved with its record */
    assert(swappedM || (atM == ORIG && atT == NONE && rec == NONE) || (atM == NONE && atT == ORIG && rec == ENG));
    /* nothing half-done: staging holds only what could not go back */
    i = 0;
    do :: i < N -> assert(staged[i] == NONE || kept[i]); i++ :: else -> break od
}

/* Another user with write access to the folders: replaces a planned entry by its own (rename over it), or takes
   a name the engine freed, at any moment between two of the engine's steps. Once per name (bounds the states). */
proctype CoTenant() {
    do
    :: atomic { !nocrash && swaps < MAXSWAP && at[F] == ORIG && !swapped[F] -> at[F] = COT; swapped[F] = 1; cotAt[F] = 1; swaps++ }
    :: atomic { !nocrash && swaps < MAXSWAP && at[D] == ORIG && !swapped[D] -> at[D] = COT; swapped[D] = 1; cotAt[D] = 1; swaps++ }
    :: atomic { !nocrash && swaps < MAXSWAP && at[I] == ORIG && !swapped[I] -> at[I] = COT; swapped[I] = 1; cotAt[I] = 1; swaps++ }
    :: atomic { !nocrash && swaps < MAXSWAP && at[D] == NONE && !gone[D] && !swapped[D] -> at[D] = COT; swapped[D] = 1; cotAt[D] = 1; swaps++ }
    /* the move: its source replaced, its destination or its record's name taken first */
    :: atomic { !nocrash && swaps < MAXSWAP && atM == ORIG && !swappedM -> atM = COT; swappedM = 1; cotM = 1; swaps++ }
    :: atomic { !nocrash && swaps < MAXSWAP && atT == NONE && !swappedM -> atT = COT; swappedM = 1; cotT = 1; swaps++ }
    :: atomic { !nocrash && swaps < MAXSWAP && rec == NONE && !swappedM -> rec = COT; swappedM = 1; cotRec = 1; swaps++ }
    :: break
    od;
    cotDone = 1
}

byte finished;

/* `policyctl recover` on its own (a timer, an operator), after the runs: it may be killed too. */
proctype Recoverer() {
    byte i;
    bool ok;
    atomic { lock == 0 -> lock = _pid };
    recover();
    lock = 0;
    goto done;
crashed:
    die();
done:
    finished++
}

proctype Run() {
    byte i;
    bool ok;
    atomic { lock == 0 -> lock = _pid };
    recover();
    plan();
    apply();
    lock = 0;
    goto done;
crashed:
    die();
done:
    finished++
}

init {
    byte i;
    bool ok;
    byte snap[N];
    atomic { at[F] = ORIG; at[D] = ORIG; at[I] = ORIG; atM = ORIG }
    run CoTenant();
    run Run();
    run Run();
    finished == 2;
    run Recoverer();
    finished == 3;
    nocrash = 1;
    cotDone;
    lock == 0;
    /* the last recovery, to completion */
    recover();
    /* idempotence: the rollback replayed on what it left changes nothing */
    byte snapM, snapT, snapR;
    atomic { i = 0; do :: i < N -> snap[i] = at[i]; i++ :: else -> break od; snapM = atM; snapT = atT; snapR = rec }
    if
    :: !committed -> open = 1; recover()
    :: else -> skip
    fi;
    i = 0;
    do :: i < N -> assert(at[i] == snap[i]); i++ :: else -> break od;
    assert(atM == snapM && atT == snapT && rec == snapR);
    /* convergence: a clean re-apply reaches what an uninterrupted apply reaches */
    plan();
    apply();
    assert(swapped[F] || gone[F]);
    assert(swapped[D] || swapped[I] || (gone[D] && gone[I]));
    assert(swappedM || (atM == NONE && atT == ORIG && rec == ENG));
    assert(!cotHarmed);
    goto done;
crashed:
    assert(0);   /* nocrash: never reached */
done:
    skip
}
