"""Features over git history: forgetting, undo, rollback, sync, drift, gc, diff and blame of
what was learned, merge drivers, recorded removals and the doctor.

Each module takes the floor (`memctl.core.floor.Floor`) and works on the vault's files and
commits; none imports the front door or a face.
"""
