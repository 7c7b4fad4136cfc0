"""Compiles Python files without writing bytecode, for redfix's driver.

Arguments: the files, relative to the working directory. Prints one JSON
object a line for each file that does not compile.
"""
import json
import sys

for path in sys.argv[1:]:
    try:
        with open(path, "rb") as f:
            source = f.read()
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        print(json.dumps({"file": path, "line": e.lineno or 0, "kind": type(e).__name__, "message": e.msg}))
    except (ValueError, OSError) as e:
        print(json.dumps({"file": path, "line": 0, "kind": type(e).__name__, "message": str(e)}))
