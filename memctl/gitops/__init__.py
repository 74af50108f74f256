"""Features over git history: forgetting, undo, rollback, sync, drift, gc, diff and blame of
what was learned, merge drivers, recorded removals and the doctor.

Each module takes the floor (`memctl.core.floor.Floor`) and works on the vault's files and
commits; none imports the front door or a face. Sync is five modules, named for what each
decides:

sync.py            `memctl sync`: fetch, check, rebase or merge, settle, push
remotetrust.py     what a remote may send: the fetched range checked before checkout, the
                   protected settings a pull changes held until accepted, a clone joined
pulledfiles.py     each pulled path and blob judged (where it may be, what it may hold)
pulledcuration.py  the curation state a pull brought, screened against this clone's own
syncrecovery.py    an interrupted sync's journal, and putting right what it left
"""
