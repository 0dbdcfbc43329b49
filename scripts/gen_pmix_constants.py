#!/usr/bin/env python3
"""Generate the constant and attribute sections of the public PMIx headers.

Sources, in order of authority:
  1. the PMIx standard's constants and attributes, as scripts/pmix_spec_items.tsv
     keeps them: extracted once from the standard's LaTeX chapters
       \\declareconstitemvalue{NAME}{VALUE}  description...
       \\declareAttribute{NAME}{"key"}{type}{description}
     (and their *Provisional variants), one item a line; --spec DIR reads the
     chapters themselves instead and rewrites that file;
  2. scripts/pmix42_facts.txt: what the v4.2 ABI has that the spec text lacks
     or states differently (see the comments at the top of that file).

Outputs (rewritten between BEGIN/END GENERATED markers, or whole):
  scripts/pmix_spec_items.tsv  only with --spec
  include/pmix_common.h       constants and attribute keys of the standard
  include/pmix_deprecated.h   names 4.2 still defines for old programs
  framework/api/attributes.inc  X-macro table, one line per attribute:
      PMIXPP_ATTRIBUTE(NAME_STRING, KEY_STRING, TYPE_CONSTANT, "description")

Usage: scripts/gen_pmix_constants.py [--spec DIR] [--check]
  --spec DIR  the directory of the standard's chapters (Chap_*.tex) to extract
              the items from, instead of scripts/pmix_spec_items.tsv
  --check     exit 1 if any output would change (the generated_constants_current
              test), write nothing.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC_ITEMS = os.path.join(ROOT, "scripts", "pmix_spec_items.tsv")

# Spec chapters in the order their sections appear in pmix_common.h, with the
# heading each gets.
CHAPTERS = [
    ("Chap_API_Struct.tex", "Data structures, limits, status codes and enumerations"),
    ("Chap_API_Reserved_Keys.tex", "Reserved keys (job, app, node and process information)"),
    ("Chap_API_Init.tex", "Initialization and finalization"),
    ("Chap_API_Sync.tex", "Synchronization"),
    ("Chap_API_Sharing_Basics.tex", "Data sharing (Put/Get)"),
    ("Chap_API_Publish.tex", "Publish and lookup"),
    ("Chap_API_Event.tex", "Event notification"),
    ("Chap_API_Data_Mgmt.tex", "Data packing and management"),
    ("Chap_API_Proc_Mgmt.tex", "Process management (spawn, connect, abort)"),
    ("Chap_API_Job_Mgmt.tex", "Job management and reporting"),
    ("Chap_API_Query.tex", "Query"),
    ("Chap_API_Sets_Groups.tex", "Process sets and groups"),
    ("Chap_API_Fabric.tex", "Fabric support"),
    ("Chap_API_Security.tex", "Security"),
    ("Chap_API_Server.tex", "Server (host environment) support"),
    ("Chap_API_Tools.tex", "Tools, debuggers and IO forwarding"),
    ("Chap_API_Storage.tex", "Storage"),
    ("Chap_Introduction.tex", "Miscellaneous"),
]

# spec type spelling -> pmix_data_type_t constant for the attribute table
TYPE_MAP = {
    "bool": "PMIX_BOOL", "char*": "PMIX_STRING", "char *": "PMIX_STRING", "string": "PMIX_STRING",
    "uint32_t": "PMIX_UINT32", "uint64_t": "PMIX_UINT64", "uint16_t": "PMIX_UINT16",
    "uint8_t": "PMIX_UINT8", "int": "PMIX_INT", "int32_t": "PMIX_INT32", "int64_t": "PMIX_INT64",
    "size_t": "PMIX_SIZE", "float": "PMIX_FLOAT", "double": "PMIX_DOUBLE", "pid_t": "PMIX_PID",
    "time_t": "PMIX_TIME", "struct timeval": "PMIX_TIMEVAL",
    "pmix_rank_t": "PMIX_PROC_RANK", "pmix_status_t": "PMIX_STATUS",
    "pmix_data_array_t": "PMIX_DATA_ARRAY", "pmix_data_array_t*": "PMIX_DATA_ARRAY",
    "array": "PMIX_DATA_ARRAY", "pmix_proc_t array": "PMIX_DATA_ARRAY",
    "pmix_envar_t": "PMIX_ENVAR", "pmix_envar_t*": "PMIX_ENVAR",
    "pmix_byte_object_t": "PMIX_BYTE_OBJECT", "pmix_proc_t": "PMIX_PROC", "pmix_proc_t*": "PMIX_PROC",
    "pmix_topology_t": "PMIX_TOPO", "pmix_topology_t*": "PMIX_TOPO",
    "pmix_cpuset_t": "PMIX_PROC_CPUSET", "pmix_cpuset_t*": "PMIX_PROC_CPUSET",
    "pmix_geometry_t": "PMIX_GEOMETRY", "pmix_device_type_t": "PMIX_DEVTYPE",
    "pmix_scope_t": "PMIX_SCOPE", "pmix_data_range_t": "PMIX_DATA_RANGE",
    "pmix_persistence_t": "PMIX_PERSIST", "pmix_proc_state_t": "PMIX_PROC_STATE",
    "pmix_link_state_t": "PMIX_LINK_STATE", "pmix_job_state_t": "PMIX_JOB_STATE",
    "pmix_storage_medium_t": "PMIX_STOR_MEDIUM", "pmix_storage_accessibility_t": "PMIX_STOR_ACCESS",
    "pmix_storage_persistence_t": "PMIX_STOR_PERSIST", "pmix_storage_access_type_t": "PMIX_STOR_ACCESS_TYPE",
    "pmix_coord_t": "PMIX_COORD", "pmix_coord_t*": "PMIX_COORD", "pmix_locality_t": "PMIX_LOCTYPE",
    "pmix_info_t": "PMIX_INFO", "pmix_info_t*": "PMIX_INFO",
    "void*": "PMIX_POINTER", "void *": "PMIX_POINTER", "pointer": "PMIX_POINTER",
    "void": "PMIX_UNDEF", "NULL": "PMIX_UNDEF", "varies": "PMIX_UNDEF",
}


def balanced(text, pos):
    """text[pos] == '{': return (content, index after the closing brace)."""
    assert text[pos] == "{"
    depth = 0
    for i in range(pos, len(text)):
        c = text[i]
        if c == "\\":
            continue
        if c == "{" and text[i - 1] != "\\":
            depth += 1
        elif c == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[pos + 1:i], i + 1
    raise ValueError("unbalanced braces at %d" % pos)


def detex(s):
    """Turn a LaTeX description into one line of plain text."""
    s = re.sub(r"(?m)%.*$", "", s)
    for _ in range(4):
        s = re.sub(r"\\(?:refattr|refconst|refapi|refstruct|refarg|refterm|refenvar|code|textit|emph|textbf|"
                   r"texttt|acp|acs|ac|Acp|Ac|declareterm|refmacro|refsect|refchap|ref|cref|Cref|label|"
                   r"hyperref\[[^]]*\]|term|pasteAttributeItem|pastePRIAttributeItem)\*?\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"\\(?:item|\\|newline|noindent|vspace\{[^}]*\}|begin\{[^}]*\}|end\{[^}]*\})", " ", s)
    s = s.replace(r"\_", "_").replace(r"\&", "&").replace(r"\%", "%").replace(r"\#", "#")
    s = s.replace("``", '"').replace("''", '"').replace("~", " ").replace("--", "-")
    s = re.sub(r"\\[a-zA-Z]+\*?", "", s)
    s = s.replace("{", "").replace("}", "")
    s = " ".join(s.split())
    return s


def first_sentence(s, limit=200):
    m = re.match(r"(.+?[.;])(\s|$)", s)
    out = m.group(1) if m else s
    if len(out) > limit:
        out = out[: limit - 3].rstrip() + "..."
    return out


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_spec(spec_dir):
    consts, attrs = {}, {}
    order = []  # (chapter, kind, name)
    for chap, _ in CHAPTERS:
        path = os.path.join(spec_dir, chap)
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"\\declare(constitemvalue|constitemvalueProvisional|Attribute|AttributeProvisional)\{", text):
            kind = m.group(1)
            name, p = balanced(text, m.end() - 1)
            name = name.replace(r"\_", "_").strip()
            if kind.startswith("constitem"):
                value, p = balanced(text, p)
                stop = re.search(r"\n%|\\declare|\\end\{constantdesc\}", text[p:])
                desc = detex(text[p:p + stop.start()] if stop else text[p:])
                if name not in consts:
                    consts[name] = (value.strip(), desc, chap)
                    order.append((chap, "const", name))
            else:
                key, p = balanced(text, p)
                typ, p = balanced(text, p)
                desc, p = balanced(text, p)
                typ = detex(typ).strip()
                if name not in attrs:
                    attrs[name] = (key.strip().strip('"'), typ, detex(desc), chap)
                    order.append((chap, "attr", name))
    return consts, attrs, order


SPEC_ITEMS_HEAD = """\
# The constants and attributes of the PMIx standard, one item a line, in the
# order of the standard's chapters; read by scripts/gen_pmix_constants.py.
# Extracted from the LaTeX chapters of the "Process Management Interface for
# Exascale (PMIx) Standard" (pmix/pmix-standard, commit 988c915fbe31),
# Copyright (c) 2018-2023 PMIx Administrative Steering Committee (ASC), copied
# by permission of PMIx ASC. Regenerate with: gen_pmix_constants.py --spec DIR
#
# Tab-separated fields:
#   const  chapter  NAME  value         (empty)  description
#   attr   chapter  NAME  key           type     description
"""


def format_items(consts, attrs, order):
    rows = []
    for chap, kind, name in order:
        if kind == "const":
            value, desc, _ = consts[name]
            fields = ["const", chap, name, value, "", desc]
        else:
            key, typ, desc, _ = attrs[name]
            fields = ["attr", chap, name, key, typ, desc]
        for f in fields:
            if "\t" in f or "\n" in f:
                sys.exit("%s: a tab or newline in %r cannot be kept in %s" % (name, f, SPEC_ITEMS))
        rows.append("\t".join(fields))
    return SPEC_ITEMS_HEAD + "\n".join(rows) + "\n"


def read_items(path):
    """The inverse of format_items: (consts, attrs, order) as parse_spec gives them."""
    consts, attrs, order = {}, {}, []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        sys.exit("cannot read the spec items: %s" % e)
    for lineno, line in enumerate(lines, 1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 6 or fields[0] not in ("const", "attr"):
            sys.exit("%s:%d: want 6 tab-separated fields, const|attr first: %s" % (path, lineno, line))
        kind, chap, name, first, typ, desc = fields
        if kind == "const":
            consts[name] = (first, desc, chap)
        else:
            attrs[name] = (first, typ, desc, chap)
        order.append((chap, kind, name))
    return consts, attrs, order


def parse_facts(path):
    """See the header of pmix42_facts.txt for the line forms."""
    facts = {"skip": set(), "const": {}, "attr": {}, "dep-const": [], "dep-attr": [], "type": {}}
    for lineno, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word == "skip":
            facts["skip"].update(rest.split())
        elif word in ("const", "dep-const"):
            name, _, tail = rest.partition(" ")
            value, _, desc = tail.partition("#")
            entry = (name, value.strip(), desc.strip())
            if word == "const":
                facts["const"][name] = entry
            else:
                facts["dep-const"].append(entry)
        elif word in ("attr", "dep-attr"):
            m = re.match(r'(\S+)\s+"([^"]*)"\s+(\S+(?:\s\S+)?)\s*\|\s*(.*)$', rest)
            if not m:
                sys.exit("%s:%d: cannot parse: %s" % (path, lineno, line))
            entry = (m.group(1), m.group(2), m.group(3), m.group(4).strip())
            if word == "attr":
                facts["attr"][m.group(1)] = entry
            else:
                facts["dep-attr"].append(entry)
        elif word == "type":
            name, _, typ = rest.partition(" ")
            facts["type"][name] = typ.strip()
        else:
            sys.exit("%s:%d: unknown directive %s" % (path, lineno, word))
    return facts


def c_value(value):
    v = value.strip()
    if v.startswith('"'):
        return v
    if re.fullmatch(r"-?(0x[0-9a-fA-F]+|[0-9]+)[uUlL]*", v):
        return "(%s)" % v if v.startswith("-") else v
    if re.fullmatch(r"[A-Z_][A-Z0-9_]*", v):
        return v
    return "(%s)" % v


def define_line(name, value, comment):
    head = "#define %-40s %s" % (name, value)
    if comment:
        comment = comment.replace("*/", "* /")
        return head + "  /* " + comment + " */"
    return head


def attr_type(facts, name, spec_type):
    if name in facts["type"]:
        return facts["type"][name]
    t = spec_type.replace("\\refstruct", "").strip()
    t = re.sub(r"\s*\(.*\)$", "", t)
    if t not in TYPE_MAP:
        sys.exit("attribute %s: no pmix data type known for spec type '%s' (add a 'type' line to the facts file)" % (name, spec_type))
    return TYPE_MAP[t]


def build(consts, attrs, order):
    facts = parse_facts(os.path.join(ROOT, "scripts", "pmix42_facts.txt"))
    skip = facts["skip"]

    # Sections of pmix_common.h, one per chapter: constants then attributes.
    per_chap = {c: {"const": [], "attr": []} for c, _ in CHAPTERS}
    seen = set()
    for chap, kind, name in order:
        if name in skip or name in seen:
            continue
        seen.add(name)
        if kind == "const":
            value, desc, _ = consts[name]
            if name in facts["const"]:
                value = facts["const"][name][1]
            per_chap[chap]["const"].append((name, c_value(value), first_sentence(desc, 110)))
        else:
            key, typ, desc, _ = attrs[name]
            if name in facts["attr"]:
                _, key, typ, desc = facts["attr"][name]
            per_chap[chap]["attr"].append((name, key, attr_type(facts, name, typ), desc))
    # 4.2 facts absent from the spec text go to the section they name.
    extra_const = [e for n, e in facts["const"].items() if n not in seen]
    extra_attr = [e for n, e in facts["attr"].items() if n not in seen]

    table = []  # (name, key, type, desc) for attributes.inc
    out = []
    for chap, title in CHAPTERS:
        cs, ats = per_chap[chap]["const"], per_chap[chap]["attr"]
        if not cs and not ats:
            continue
        out.append("")
        out.append("/* ---- %s %s */" % (title, "-" * max(3, 72 - len(title))))
        for name, value, desc in cs:
            out.append(define_line(name, value, desc))
        if cs and ats:
            out.append("")
        for name, key, typ, desc in ats:
            out.append(define_line(name, c_string(key), "(%s) %s" % (typ, first_sentence(desc, 90))))
            table.append((name, key, typ, desc))
    if extra_const or extra_attr:
        out.append("")
        out.append("/* ---- Defined by v4.2 implementations, outside the standard's text " + "-" * 9 + " */")
        for name, value, desc in extra_const:
            out.append(define_line(name, c_value(value), desc))
        for name, key, typ, desc in extra_attr:
            typ = attr_type(facts, name, typ)
            out.append(define_line(name, c_string(key), "(%s) %s" % (typ, desc)))
            table.append((name, key, typ, desc))
    common = "\n".join(out) + "\n"

    dep = ["", "/* ---- Status codes and data types kept for older programs " + "-" * 17 + " */"]
    for name, value, desc in facts["dep-const"]:
        dep.append(define_line(name, c_value(value), desc))
    dep.append("")
    dep.append("/* ---- Attribute keys kept for older programs " + "-" * 30 + " */")
    for name, key, typ, desc in facts["dep-attr"]:
        typ = attr_type(facts, name, typ)
        dep.append(define_line(name, c_string(key), "(%s) %s" % (typ, desc)))
        table.append((name, key, typ, desc))
    deprecated = "\n".join(dep) + "\n"

    inc = [
        "/* Generated by scripts/gen_pmix_constants.py from the PMIx standard and",
        "   scripts/pmix42_facts.txt. Do not edit: change the generator or the facts.",
        "",
        "   One line per attribute the v4.2 headers define:",
        "     PMIXPP_ATTRIBUTE(NAME_STRING, KEY_STRING, TYPE_CONSTANT, \"description\")",
        "   Define PMIXPP_ATTRIBUTE before including this file. */",
        "",
    ]
    for name, key, typ, desc in table:
        inc.append("PMIXPP_ATTRIBUTE(%s, %s, %s, %s)" % (c_string(name), c_string(key), typ, c_string(desc)))
    inc_text = "\n".join(inc) + "\n"
    return common, deprecated, inc_text


BEGIN = "/* BEGIN GENERATED by scripts/gen_pmix_constants.py: do not edit by hand */"
END = "/* END GENERATED */"


def splice(path, body):
    text = open(path, encoding="utf-8").read()
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        sys.exit("%s: missing generated-section markers" % path)
    return text[: a + len(BEGIN)] + "\n" + body + text[b:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", help="directory of the standard's Chap_*.tex (default: use %s)" %
                    os.path.relpath(SPEC_ITEMS, ROOT))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    targets = []
    if args.spec:
        items = parse_spec(args.spec)
        targets.append((SPEC_ITEMS, lambda p: format_items(*items)))
    else:
        items = read_items(SPEC_ITEMS)
    common, deprecated, inc = build(*items)
    targets += [
        (os.path.join(ROOT, "include", "pmix_common.h"), lambda p: splice(p, common)),
        (os.path.join(ROOT, "include", "pmix_deprecated.h"), lambda p: splice(p, deprecated)),
        (os.path.join(ROOT, "framework", "api", "attributes.inc"), lambda p: inc),
    ]
    changed = []
    for path, make in targets:
        new = make(path)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if new != old:
            changed.append(path)
            if not args.check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
    if args.check and changed:
        print("out of date: " + ", ".join(changed))
        return 1
    for p in changed:
        print("wrote " + os.path.relpath(p, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
