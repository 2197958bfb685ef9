#!/usr/bin/python3
"""Helpers for verdict golden tests.

  verdict_tool.py validate SCHEMA VERDICT   validate with jsonschema (Debian's python3-jsonschema)
  verdict_tool.py strip-engine VERDICT      print the verdict without its `engine` block
"""
import json
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd = sys.argv[1]
    if cmd == "validate":
        import jsonschema  # python3-jsonschema, installed by scripts/install-deps.sh
        schema = json.load(open(sys.argv[2]))
        verdict = json.load(open(sys.argv[3]))
        validator = jsonschema.Draft202012Validator(schema)
        errors = sorted(validator.iter_errors(verdict), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            print("schema violation at /%s: %s" % ("/".join(map(str, e.absolute_path)), e.message), file=sys.stderr)
        return 1 if errors else 0
    if cmd == "strip-engine":
        verdict = json.load(open(sys.argv[2]))
        verdict.pop("engine", None)
        sys.stdout.write(json.dumps(verdict, indent=2, ensure_ascii=False) + "\n")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
