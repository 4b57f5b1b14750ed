#!/usr/bin/python3
"""import kael with a FIFO, a truncated library and a folder named like plugins on
KAEL_PLUGIN_PATH, plus a regular file as a path entry: the import must finish (CTest's timeout
catches a hang, a SIGBUS kills the process) and kael.plugins() / kael.discovery_steps() must say
why each was refused, as kael-info does.

    check_python_unloadable.py <folder made by make_unloadable_plugins.cmake>
"""
import os
import sys

import kael

folder = sys.argv[1]
records = {record.name: record for record in kael.plugins()}
expected = {
    "truncated": "truncated or corrupt ELF file",
    "fifo": "is a FIFO, not a regular file",
    "fifo_link": "is a FIFO, not a regular file",
    "folder": "is a directory, not a regular file",
}
failures = []
for name, words in expected.items():
    record = records.get(name)
    if record is None:
        failures.append("no record for " + name)
    elif record.status != "load error" or words not in record.reason:
        failures.append("%s: %s: %s" % (name, record.status, record.reason))
missing = records.get("no_such_plugin")
if missing is None or missing.status != "not found" or missing.path != "":
    failures.append("no 'not found' record for no_such_plugin")
steps = {step["folder"]: step for step in kael.discovery_steps()}
entry = steps.get(os.path.join(folder, "not_a_folder"))
if entry is None or "is a regular file, not a folder" not in entry["reason"]:
    failures.append("the regular file on KAEL_PLUGIN_PATH is not reported: %r" % (entry,))
if kael.ones(3).sum().item() != 3.0:
    failures.append("kael does not compute after refusing the files")
for line in failures:
    print(line)
sys.exit(1 if failures else 0)
