# SPDX-License-Identifier: MIT
"""Checks dnd's JSON against docs/schema/ and docs/json.md (80-json-schema.sh).

  schema_check.py DOCS validate TYPE FILE...  every line of FILE is a JSON
      object of TYPE, valid against DOCS/schema/TYPE.json
  schema_check.py DOCS strict TYPE FILE      the first object of FILE with
      one field added, one removed and one nested field added: each must
      fail (the schema cannot quietly accept what it does not describe)
  schema_check.py DOCS examples              each schema's examples are valid
  schema_check.py DOCS closed                every object a schema describes
      refuses fields it does not list (additionalProperties or
      unevaluatedProperties false; a $defs piece where it is used)
  schema_check.py DOCS doc                   docs/json.md documents every
      field of every schema and nothing else

Runs with Debian's python3-jsonschema (4.10 uses RefResolver; newer ones
the referencing registry). Exit 0 when all holds, else 1 with the reasons.
"""
import copy
import fnmatch
import json
import os
import re
import sys

import jsonschema

DRAFT = jsonschema.Draft202012Validator


def load_schemas(docs):
    d = os.path.join(docs, "schema")
    out = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as f:
                out[name] = json.load(f)
    return out


def validator(schemas, name):
    """A validator for schemas[name] that resolves "common.json"."""
    s = schemas[name]
    DRAFT.check_schema(s)
    try:
        from referencing import Registry, Resource
    except ImportError:
        store = {k: v for k, v in schemas.items()}
        resolver = jsonschema.RefResolver("", s, store=store)
        return DRAFT(s, resolver=resolver)
    reg = Registry().with_resources(
        (k, Resource.from_contents(v)) for k, v in schemas.items())
    return DRAFT(s, registry=reg)


def errors_of(v, obj):
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)",
                        e.message) for e in v.iter_errors(obj)]


def cmd_validate(schemas, tname, files):
    v = validator(schemas, tname + ".json")
    n, bad = 0, []
    for path in files:
        with open(path) as f:
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                obj = json.loads(line)
                n += 1
                if obj.get("type") != tname:
                    bad.append("%s:%d: type %r" % (path, i, obj.get("type")))
                    continue
                bad += ["%s:%d: %s" % (path, i, e) for e in errors_of(v, obj)]
    if not n:
        bad.append("no %s object in %s" % (tname, " ".join(files)))
    return n, bad


def local_parts(s, root):
    """s and the local pieces it applies in place: allOf entries and
    "$ref": "#/$defs/NAME" ("#" itself is the whole document again)."""
    out = [s]
    for sub in s.get("allOf", []):
        out += local_parts(sub, root)
    ref = s.get("$ref", "")
    if ref.startswith("#/$defs/"):
        out += local_parts(root["$defs"][ref[len("#/$defs/"):]], root)
    return out


def cmd_strict(schemas, tname, path):
    v = validator(schemas, tname + ".json")
    with open(path) as f:
        obj = json.loads(f.readline())
    bad = []
    extra = dict(obj, undocumented_field=1)
    if not errors_of(v, extra):
        bad.append("an undocumented top-level field was accepted")
    top = schemas[tname + ".json"]
    req = [r for part in local_parts(top, top)
           for r in part.get("required", [])]
    if req:
        less = {k: x for k, x in obj.items() if k != req[-1]}
        if not errors_of(v, less):
            bad.append("an object without %r was accepted" % req[-1])
    nested = [k for k, x in obj.items() if isinstance(x, dict)]
    if nested:
        deep = copy.deepcopy(obj)
        deep[nested[0]]["undocumented_field"] = 1
        if not errors_of(v, deep):
            bad.append("an undocumented field inside %r was accepted"
                       % nested[0])
    return bad


def cmd_examples(schemas):
    bad, n = [], 0
    for name, s in schemas.items():
        if name == "common.json":
            continue
        v = validator(schemas, name)
        for i, ex in enumerate(s.get("examples", [])):
            n += 1
            bad += ["%s example %d: %s" % (name, i, e)
                    for e in errors_of(v, ex)]
    return n, bad


def schema_paths(s, prefix="", root=None):
    """Dotted field paths a schema allows; "*" for any key of a map, "[]"
    for the items of an array. Local $defs pieces count where they are
    applied; a reference to another file is that file's to document."""
    out = []
    root = root or s
    for part in local_parts(s, root):
        for k, sub in part.get("properties", {}).items():
            if sub is False:
                continue
            p = prefix + k
            out.append(p)
            out += schema_paths(sub, p + ".", root)
            if isinstance(sub.get("items"), dict):
                out += schema_paths(sub["items"], p + "[].", root)
        ap = part.get("additionalProperties")
        if isinstance(ap, dict):
            out.append(prefix + "*")
            out += schema_paths(ap, prefix + "*.", root)
    return list(dict.fromkeys(out))


def closed_problems(s, where, closed_above=False):
    """Where s, or a schema within it, describes an object that would take
    a field it does not list. A $defs piece lists fields for the schema
    that applies it, which must close them (unevaluatedProperties)."""
    if not isinstance(s, dict):
        return []
    closes = (s.get("additionalProperties") is False or
              s.get("unevaluatedProperties") is False)
    shut = closes or closed_above
    bad = []
    if "properties" in s and not shut:
        bad.append("%s: an object open to fields it does not list" % where)
    if "#/$defs/" in s.get("$ref", "") and not shut:
        bad.append("%s: applies %s without closing it" % (where, s["$ref"]))
    for k, sub in s.get("properties", {}).items():
        bad += closed_problems(sub, "%s.%s" % (where, k))
    for key in ("items", "additionalProperties"):
        bad += closed_problems(s.get(key), "%s[%s]" % (where, key))
    for i, sub in enumerate(s.get("allOf", [])):
        bad += closed_problems(sub, "%s.allOf[%d]" % (where, i), shut)
    for k, sub in s.get("$defs", {}).items():
        bad += closed_problems(sub, "%s.$defs.%s" % (where, k), True)
    for key in ("anyOf", "oneOf"):
        if key in s:
            bad.append("%s: %s, which this check does not read" % (where, key))
    return bad


def cmd_closed(schemas):
    bad = []
    for name, s in schemas.items():
        if name != "common.json":
            bad += closed_problems(s, name)
    return bad


def doc_sections(docs):
    """{type: [(documented path, current path)]} from docs/json.md: the
    first column of each table row under a "## `type`" heading, "## Every
    object" or "## Every bench object"; a section that links to
    (#every-bench-object) has that section's rows too."""
    out, cur, shared = {}, None, []
    with open(os.path.join(docs, "json.md")) as f:
        for line in f:
            m = re.match(r"^## (?:`([a-z_]+)`|Every (bench )?object)", line)
            if m:
                key = m.group(1) or ("every_bench_object" if m.group(2)
                                     else "every_object")
                cur = out.setdefault(key, [])
                continue
            if line.startswith("## "):
                cur = None
            if cur is not None and "(#every-bench-object)" in line:
                shared.append(cur)
            if cur is None or not line.startswith("| `"):
                continue
            cell = line.split("|")[1]
            name = re.search(r"`([^`]+)`", cell).group(1)
            old = re.search(r"renamed from `([^`]+)`", cell)
            cur.append((name, old.group(1) if old else name))
    for rows in shared:
        rows += out.get("every_bench_object", [])
    return out


def cmd_doc(schemas, docs):
    bad = []
    secs = doc_sections(docs)
    common = set(schemas["common.json"]["properties"])
    for name, s in schemas.items():
        tname = name[:-5]
        if name == "common.json":
            tname = "every object"
            rows = secs.get("every_object", [])
        else:
            rows = secs.get(tname)
        if rows is None:
            bad.append("docs/json.md has no section ## `%s`" % tname)
            continue
        paths = [p for p in schema_paths(s)
                 if name == "common.json" or p not in common]
        cur = [c for _, c in rows]
        for p in paths:
            if not any(fnmatch.fnmatchcase(p, c) or p == c for c in cur):
                bad.append("%s: field %s is not in docs/json.md" % (tname, p))
        for doc_name, c in rows:
            if not any(fnmatch.fnmatchcase(p, c) or p == c for p in paths):
                bad.append("%s: docs/json.md documents %s, which the schema "
                           "does not have" % (tname, doc_name))
    for tname in secs:
        if (tname not in ("every_object", "every_bench_object") and
                tname + ".json" not in schemas):
            bad.append("docs/json.md documents type %s without a schema "
                       "file" % tname)
    return bad


def main(argv):
    docs, cmd = argv[1], argv[2]
    schemas = load_schemas(docs)
    if cmd == "validate":
        n, bad = cmd_validate(schemas, argv[3], argv[4:])
        what = "%d %s objects valid" % (n, argv[3])
    elif cmd == "strict":
        bad = cmd_strict(schemas, argv[3], argv[4])
        what = "%s rejects undocumented and missing fields" % argv[3]
    elif cmd == "examples":
        n, bad = cmd_examples(schemas)
        what = "%d schema examples valid" % n
    elif cmd == "closed":
        bad = cmd_closed(schemas)
        what = "every object of %d schemas refuses unlisted fields" % (
            len(schemas) - 1)
    elif cmd == "doc":
        bad = cmd_doc(schemas, docs)
        what = "docs/json.md documents every field of %d schemas" % (
            len(schemas))
    else:
        sys.exit("schema_check.py: unknown command " + cmd)
    for b in bad[:40]:
        print("  " + b)
    if bad:
        print("FAIL: %d problems" % len(bad))
        return 1
    print("ok - " + what)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
